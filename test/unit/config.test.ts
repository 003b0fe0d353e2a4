import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { SPEC_PLANS, type PlansFile } from '../../src/plans';

const base = { MONGODB_URI: 'mongodb://127.0.0.1:27017/' };

describe('loadConfig', () => {
  it('when only MONGODB_URI is set, then every other setting has its documented default', () => {
    expect(loadConfig(base)).toEqual({
      NODE_ENV: 'production',
      HOST: '0.0.0.0',
      PORT: 8080,
      LOG_LEVEL: 'info',
      LOG_PRETTY: false,
      MONGODB_URI: base.MONGODB_URI,
      MONGODB_DB: 'tripwire',
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'tripwire',
      BODY_LIMIT: '100kb',
      TRUST_PROXY: false,
      SESSION_TTL_HOURS: 12,
      SMTP_FROM: 'Tripwire alerts <alerts@localhost>',
      TELEGRAM_API_BASE: 'https://api.telegram.org',
      PUBLIC_BASE_URL: 'http://localhost:8080',
      DECOY_EMAIL_DOMAIN: 'decoys.localhost',
      DECOY_SMTP_PORT: 2525,
      PUBLIC_HOST: 'localhost',
      CANARY_DNS_DOMAIN: 'canary.localhost',
      STORM_WINDOW_SECONDS: 60,
      TRIPWIRE_JOURNAL_DIR: '.data/tripwire-journal',
      ALERT_GATHER_MS: 2000,
      ALERT_RECOVERY_SCHEDULE: [60_000, 300_000, 1_800_000, 7_200_000, 28_800_000, 86_400_000],
      CHANNEL_DISABLE_AFTER: 432_000_000,
      ABUSEIPDB_BASE_URL: 'https://api.abuseipdb.com',
      WORKER_METRICS_PORT: 9464,
      WORKER_ACTIVITY_SLOTS: 100,
      WORKER_WORKFLOW_TASK_SLOTS: 40,
      WORKER_POLLERS: 10,
      CHECKPOINT_INTERVAL_SECONDS: 60,
      COMMUNITY_MIN_WORKSPACES: 3,
      REFRESH_TTL_DAYS: 7,
      COOKIE_SECURE: true,
      SIGNUP_MODE: 'open',
      PASSWORD_HASHING_CONCURRENCY: 1,
      LOGIN_FAILURES_PER_MINUTE: 10,
      CONSOLE_DIR: 'dist/console',
      ALLOW_PRIVATE_WEBHOOK_TARGETS: false,
      OUTBOUND_DENY_CIDRS: [],
      CHANNEL_TEST_CONCURRENCY: 4,
      DEFAULT_PLAN: 'free',
      UPGRADE_URL: '/console/#/account',
      plans: SPEC_PLANS,
    });
  });

  it('when PUBLIC_BASE_URL is unset, then tripwire links follow PORT; when set, it wins', () => {
    expect(loadConfig({ ...base, PORT: '9090' }).PUBLIC_BASE_URL).toBe('http://localhost:9090');
    const config = loadConfig({ ...base, PORT: '9090', PUBLIC_BASE_URL: 'https://t.example.com' });
    expect(config.PUBLIC_BASE_URL).toBe('https://t.example.com');
  });

  it('when values are bad, then the error names each variable and why', () => {
    const load = () =>
      loadConfig({ PORT: 'eighty', LOG_PRETTY: 'yes', MONGODB_URI: 'postgres://x' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/PORT: /);
    expect(load).toThrow(/LOG_PRETTY: /);
    expect(load).toThrow(/MONGODB_URI: must start with mongodb:\/\//);
  });

  it('when tracing and worker tuning are set, then they parse; out of range or malformed, they are named', () => {
    const config = loadConfig({
      ...base,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      WORKER_POLLERS: '4',
    });
    expect(config.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://collector:4318');
    expect(config.WORKER_POLLERS).toBe(4);
    expect(
      loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: '' }).OTEL_EXPORTER_OTLP_ENDPOINT,
    ).toBe(undefined);
    const load = () =>
      loadConfig({
        ...base,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
        WORKER_POLLERS: '1',
        WORKER_ACTIVITY_SLOTS: '0',
      });
    expect(load).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT: /);
    expect(load).toThrow(/WORKER_POLLERS: /);
    expect(load).toThrow(/WORKER_ACTIVITY_SLOTS: /);
  });

  it('when MONGODB_URI is missing, then it is named', () => {
    expect(() => loadConfig({})).toThrow(/MONGODB_URI: Required/);
  });

  it('when booleans are written as 1/0 or true/false, then they parse', () => {
    expect(loadConfig({ ...base, COOKIE_SECURE: 'false' })).toMatchObject({
      COOKIE_SECURE: false,
    });
  });

  it('when ALERT_RECOVERY_SCHEDULE lists durations, then they parse; empty turns recovery off; anything else is named', () => {
    expect(
      loadConfig({ ...base, ALERT_RECOVERY_SCHEDULE: ' 2s, 90s,1h ,1d' }).ALERT_RECOVERY_SCHEDULE,
    ).toEqual([2_000, 90_000, 3_600_000, 86_400_000]);
    expect(loadConfig({ ...base, ALERT_RECOVERY_SCHEDULE: '' }).ALERT_RECOVERY_SCHEDULE).toEqual(
      [],
    );
    for (const bad of ['5', '1w', '-1m', '1.5h', '2 s']) {
      expect(() => loadConfig({ ...base, ALERT_RECOVERY_SCHEDULE: `1m,${bad}` })).toThrow(
        `ALERT_RECOVERY_SCHEDULE: "${bad}" is not a duration like 30s, 5m, 2h or 1d`,
      );
    }
  });

  it('when CHANNEL_DISABLE_AFTER is a duration, then it parses; anything else is named', () => {
    expect(loadConfig({ ...base, CHANNEL_DISABLE_AFTER: '90s' }).CHANNEL_DISABLE_AFTER).toBe(
      90_000,
    );
    for (const bad of ['', '0s', '5', '1w', '-1d', '2 d']) {
      expect(() => loadConfig({ ...base, CHANNEL_DISABLE_AFTER: bad })).toThrow(
        `CHANNEL_DISABLE_AFTER: "${bad}" is not a duration like 30s, 5m, 2h or 5d`,
      );
    }
  });

  it('when OUTBOUND_DENY_CIDRS lists CIDRs, then they parse; anything else is named', () => {
    expect(
      loadConfig({ ...base, OUTBOUND_DENY_CIDRS: ' 203.0.113.0/24, 2001:db8::/32 ' })
        .OUTBOUND_DENY_CIDRS,
    ).toEqual(['203.0.113.0/24', '2001:db8::/32']);
    for (const bad of [
      '203.0.113.7',
      '203.0.113.0/33',
      'example.com/24',
      '10.0.0.0/8;1.2.3.0/24',
    ]) {
      expect(() => loadConfig({ ...base, OUTBOUND_DENY_CIDRS: bad })).toThrow(
        /OUTBOUND_DENY_CIDRS: must be comma-separated CIDRs/,
      );
    }
  });

  it('when built-in channel settings are empty, then they are off; when malformed, they are named', () => {
    const off = loadConfig({ ...base, SMTP_URL: '', TELEGRAM_BOT_TOKEN: '' });
    expect(off.SMTP_URL).toBeUndefined();
    expect(off.TELEGRAM_BOT_TOKEN).toBeUndefined();
    const load = () =>
      loadConfig({ ...base, SMTP_URL: 'http://mail', TELEGRAM_BOT_TOKEN: 'secret' });
    expect(load).toThrow(/SMTP_URL: must start with smtp:\/\/ or smtps:\/\//);
    expect(load).toThrow(/TELEGRAM_BOT_TOKEN: a Bot API token/);
  });

  it.each([
    ['1', 1],
    ['loopback', ['loopback']],
    ['loopback, 10.0.0.0/8', ['loopback', '10.0.0.0/8']],
    ['false', false],
  ])('when TRUST_PROXY is %j, then Express gets %j', (value, expected) => {
    expect(loadConfig({ ...base, TRUST_PROXY: value }).TRUST_PROXY).toEqual(expected);
  });

  it('when TRUST_PROXY is true, then it is refused: anyone could choose their address', () => {
    expect(() => loadConfig({ ...base, TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY: name the/);
  });

  it('when the security settings are bad, then each is named; operator tokens are off unless set', () => {
    expect(loadConfig(base)).not.toHaveProperty('METRICS_TOKEN', expect.anything());
    const load = () =>
      loadConfig({
        ...base,
        SIGNUP_MODE: 'sometimes',
        PASSWORD_HASHING_CONCURRENCY: '0',
        LOGIN_FAILURES_PER_MINUTE: 'many',
        METRICS_TOKEN: 'short',
        DOCS_TOKEN: 'has spaces in it, which no header can carry',
      });
    expect(load).toThrow(/SIGNUP_MODE: /);
    expect(load).toThrow(/PASSWORD_HASHING_CONCURRENCY: /);
    expect(load).toThrow(/LOGIN_FAILURES_PER_MINUTE: Expected a number/);
    expect(load).toThrow(/METRICS_TOKEN: 16–128/);
    expect(load).toThrow(/DOCS_TOKEN: 16–128/);
  });

  it.each([
    ['TEMPORAL_DB_PASSWORD', 'change-me'],
    ['METRICS_TOKEN', 'CHANGE_ME_metrics_token'],
    ['EVIDENCE_SIGNING_KEY', 'replace-me'],
    ['SMTP_URL', 'smtp://alerts:changeme@mail.example.com'],
  ])('when %s keeps the placeholder %j, then the start is refused naming it', (name, value) => {
    const load = () => loadConfig({ ...base, [name]: value });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(new RegExp(`${name}: "${value}" is a placeholder; set a real secret`));
  });

  it('when a secret is real, then it is accepted', () => {
    const config = loadConfig({
      ...base,
      TEMPORAL_DB_PASSWORD: 'q8V2-s0mething-long',
      METRICS_TOKEN: 'Zt5kq2L9w1Xc7b3Nm0pR',
    });
    expect(config.METRICS_TOKEN).toBe('Zt5kq2L9w1Xc7b3Nm0pR');
  });

  describe('plans', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tripwire-plans-'));
    const file = (name: string, content: PlansFile | string) => {
      const path = join(dir, name);
      writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
      return path;
    };

    it("when PLANS_FILE, DEFAULT_PLAN and UPGRADE_URL are set, then they replace the spec's values they name and keep the rest", () => {
      const canaries = { perMonth: 5000, perDay: 500, burstPerMinute: 60 };
      const { plans } = loadConfig({
        ...base,
        PLANS_FILE: file('own.json', { free: { canary_plants: canaries, legal_pdf_export: true } }),
        DEFAULT_PLAN: 'pro',
        UPGRADE_URL: '/help/plans',
      });
      expect(plans.defaultPlan).toBe('pro');
      expect(plans.upgradeUrl).toBe('/help/plans');
      expect(plans.limits.free.canary_plants).toEqual(canaries);
      expect(plans.limits.free.shield_inspections).toEqual(
        SPEC_PLANS.limits.free.shield_inspections,
      );
      expect(plans.limits.pro).toEqual(SPEC_PLANS.limits.pro);
      expect(plans.features.legal_pdf_export).toEqual(['free', 'pro', 'enterprise']);
    });

    it('when the plans file is malformed or names what does not exist, then the start is refused naming the entry', () => {
      const load = (content: string) => () =>
        loadConfig({ ...base, PLANS_FILE: file('bad.json', content) });
      expect(load('{"free": ')).toThrow(/PLANS_FILE .*bad\.json: .*JSON/);
      expect(load('{"gold": {}}')).toThrow(/bad\.json: top level: Unrecognized key: "gold"/);
      expect(
        load('{"free": {"canary_plants": {"perMonth": -1, "perDay": 1, "burstPerMinute": 1}}}'),
      ).toThrow(/free\.canary_plants\.perMonth: /);
      expect(load('{"pro": {"canary_plant": {}}}')).toThrow(/pro: .*canary_plant/);
      expect(() => loadConfig({ ...base, PLANS_FILE: join(dir, 'missing.json') })).toThrow(
        /PLANS_FILE .*missing\.json: ENOENT/,
      );
    });

    it('when DEFAULT_PLAN or UPGRADE_URL is not one the interface allows, then each is named', () => {
      const load = () =>
        loadConfig({ ...base, DEFAULT_PLAN: 'gold', UPGRADE_URL: 'https://billing.example.com' });
      expect(load).toThrow(/DEFAULT_PLAN: /);
      expect(load).toThrow(/UPGRADE_URL: a site-relative path/);
    });
  });

  it('when loaded, then the result is frozen', () => {
    expect(Object.isFrozen(loadConfig(base))).toBe(true);
  });
});
