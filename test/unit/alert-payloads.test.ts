import {
  agentAlertPayload,
  canaryAgeDays,
  enrichedAddress,
  followUpSummary,
  threatAlertPayload,
  type TripwireEvent,
} from '../../src/alerts/alert-payloads';
import type { IpEnrichment } from '../../src/alerts/enrichment';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const PLANTED = new Date('2026-03-01T09:00:00.000Z');

function event(overrides: Partial<TripwireEvent> = {}): TripwireEvent {
  return {
    id: 'thr_1',
    accountId: 'usr_1',
    canaryId: 'cnr_1',
    canaryKind: 'api_key',
    platform: 'GitHub Actions',
    source: { ip: '203.0.113.9', userAgent: 'curl/8', via: 'api_key', mailServer: null },
    firstHitAt: new Date('2026-03-10T11:59:00.000Z'),
    lastHitAt: new Date('2026-03-10T11:59:00.000Z'),
    hitCount: 1,
    alert: null,
    ...overrides,
  };
}

const looked: IpEnrichment = {
  ip: '203.0.113.9',
  country: 'NL',
  city: 'Amsterdam',
  org: 'Example Hosting (AS64500)',
  type: 'datacenter',
  abuseScore: 40,
};

const canary = { createdAt: PLANTED, memo: 'prod .env on build box', platform: 'build box' };

describe('threatAlertPayload', () => {
  it('when a decoy key is used from a datacenter, then the payload carries the enrichment, the risk and the memo', () => {
    const payload = threatAlertPayload(NOW, {
      event: event(),
      canary,
      looked,
      hits: 1,
      summary: 'canary fired',
    });
    expect(payload).toMatchObject({
      version: '1',
      event: 'canary.tripwire_triggered',
      sentAt: NOW.toISOString(),
      data: {
        alertLevel: 'HIGH',
        memo: 'prod .env on build box',
        canaryKind: 'api_key',
        summary: 'canary fired',
        canaryId: 'cnr_1',
        canaryAgeDays: 9,
        attacker: looked,
        // 60 (api_key) + 10 (datacenter) + 8 (abuse 40 / 5), no repeat, not within a week
        riskScore: 78,
        riskLevel: 'high',
        threatEventId: 'thr_1',
        triggeredAt: '2026-03-10T11:59:00.000Z',
      },
    });
    expect(payload.data.interpretation).toBe(
      'A decoy API key "prod .env on build box" planted on build box was used from 203.0.113.9 (datacenter). Find where this key was stored and treat that place as exposed.',
    );
    expect(payload.data.mailServer).toBeUndefined();
  });

  it('when a decoy email fires through a mail server, then the server is shown as such and the attacker fields stay empty', () => {
    const mailServer = { ip: '198.51.100.7', helo: 'mx.example.net', mailFrom: 'a@example.net' };
    const mailed = event({
      canaryKind: 'email',
      source: { ip: '', userAgent: '', via: 'email', mailServer },
    });
    expect(enrichedAddress(mailed)).toBe('198.51.100.7');
    const payload = threatAlertPayload(NOW, {
      event: mailed,
      canary,
      looked: { ...looked, ip: '198.51.100.7' },
      hits: 1,
      summary: 'canary fired',
    });
    expect(payload.data.attacker).toEqual({
      ip: '',
      country: '',
      city: '',
      org: '',
      type: 'unknown',
      abuseScore: null,
    });
    expect(payload.data.mailServer).toEqual({
      ip: '198.51.100.7',
      country: 'NL',
      city: 'Amsterdam',
      org: 'Example Hosting (AS64500)',
    });
  });

  it('when the canary is gone, then its age is 0 and the memo empty', () => {
    const payload = threatAlertPayload(NOW, {
      event: event(),
      canary: null,
      looked,
      hits: 8,
      summary: followUpSummary(7),
    });
    expect(payload.data).toMatchObject({
      canaryAgeDays: 0,
      memo: '',
      summary: 'canary fired again: 7 more hits since the first alert',
    });
    // 60 + 10 + 8 + 15 (8 hits: three doublings) + 5 (within a week) = 98
    expect(payload.data).toMatchObject({ riskScore: 98, alertLevel: 'CRITICAL' });
  });
});

describe('small parts', () => {
  it('when a canary fired before it was planted (clock skew), then its age is 0', () => {
    expect(canaryAgeDays({ createdAt: NOW }, PLANTED)).toBe(0);
  });

  it('when one hit follows, then the summary says hit, not hits', () => {
    expect(followUpSummary(1)).toBe('canary fired again: 1 more hit since the first alert');
  });
});

describe('agentAlertPayload', () => {
  const agent = {
    name: 'support-bot',
    platform: 'LangChain',
    heartbeatIntervalSeconds: 60,
    createdAt: PLANTED,
  };

  it('when an agent went silent, then a MEDIUM alert says for how long, with no attacker', () => {
    const payload = agentAlertPayload(NOW, {
      agentId: 'agt_1',
      agent,
      threatEventId: 'thr_agent_1',
      reason: { kind: 'silent', silentForMs: 125_400 },
    });
    expect(payload.data).toMatchObject({
      alertLevel: 'MEDIUM',
      platform: 'LangChain',
      canaryKind: 'agent',
      summary: 'agent went silent',
      canaryId: 'agt_1',
      canaryAgeDays: 9,
      attacker: { ip: '', type: 'unknown', abuseScore: null },
      threatEventId: 'thr_agent_1',
      triggeredAt: NOW.toISOString(),
    });
    expect(payload.data.interpretation).toMatch(
      /^Agent support-bot sent no heartbeat for 125 s \(expected every 60 s\)\./,
    );
  });

  it('when a gone agent blocked a skill, then a HIGH alert names the skill and the agent id', () => {
    const payload = agentAlertPayload(NOW, {
      agentId: 'agt_2',
      agent: null,
      threatEventId: 'thr_agent_2',
      reason: { kind: 'blocked_skill', skill: 'shell.exec', reason: 'curl | sh' },
    });
    expect(payload.data).toMatchObject({ alertLevel: 'HIGH', platform: 'agent', canaryAgeDays: 0 });
    expect(payload.data.interpretation).toBe(
      'Agent agt_2 blocked the skill "shell.exec" (curl | sh). Review what asked it to use that skill.',
    );
  });
});
