import type { KnownBlock } from '@slack/types';
import type { RESTPostAPIWebhookWithTokenJSONBody } from 'discord-api-types/v10';
import {
  discordMessage,
  emailMessage,
  slackMessage,
  telegramText,
} from '../../src/alerts/alert-rendering';
import { alertPayloadSchema, testAlertPayload, type AlertPayload } from '../../src/alerts/payload';

const tripwire: AlertPayload = {
  version: '1',
  event: 'canary.tripwire_triggered',
  sentAt: '2026-11-21T10:00:01.000Z',
  data: {
    event: 'canary.tripwire_triggered',
    alertLevel: 'CRITICAL',
    platform: 'GitHub Actions',
    canaryId: 'cnr_abc',
    canaryAgeDays: 12,
    attacker: {
      ip: '203.0.113.9',
      country: 'NL',
      city: 'Amsterdam',
      org: 'Example Hosting',
      type: 'datacenter',
      abuseScore: 87,
    },
    riskScore: 91,
    riskLevel: 'critical',
    interpretation: 'A decoy cloud key was used from a hosting provider.',
    threatEventId: 'thr_1',
    triggeredAt: '2026-11-21T10:00:00.000Z',
  },
};

const decoyEmail: AlertPayload = {
  ...tripwire,
  data: {
    ...tripwire.data,
    alertLevel: 'HIGH',
    platform: 'email',
    attacker: { ...tripwire.data.attacker, ip: '', abuseScore: null },
    mailServer: { ip: '198.51.100.7', country: 'US', city: 'Mountain View', org: 'Example Mail' },
  },
};

describe('payload schema v1', () => {
  it('when payloads are well formed, then they pass, test alerts included', () => {
    expect(alertPayloadSchema.parse(tripwire)).toEqual(tripwire);
    expect(alertPayloadSchema.parse(decoyEmail)).toEqual(decoyEmail);
    expect(alertPayloadSchema.parse(testAlertPayload(new Date()))).toMatchObject({
      data: { test: true, threatEventId: null },
    });
  });

  it.each<[string, (p: AlertPayload) => unknown]>([
    ['events that disagree', (p) => ({ ...p, data: { ...p.data, event: 'canary.test_alert' } })],
    ['a test flag on a real alert', (p) => ({ ...p, data: { ...p.data, test: true } })],
    [
      'an attacker IP beside a mail server',
      (p) => ({ ...p, data: { ...p.data, mailServer: decoyEmail.data.mailServer } }),
    ],
    ['a risk score over 100', (p) => ({ ...p, data: { ...p.data, riskScore: 101 } })],
    ['an unknown field', (p) => ({ ...p, extra: 1 })],
    ['another version', (p) => ({ ...p, version: '2' })],
  ])('when a payload has %s, then it is refused', (_case, change) => {
    expect(alertPayloadSchema.safeParse(change(tripwire)).success).toBe(false);
  });
});

describe('Slack rendering', () => {
  it('when rendered, then the blocks are Block Kit and lead with level and platform', () => {
    const message = slackMessage(tripwire);
    const blocks: KnownBlock[] = message.blocks;
    expect(message.text).toContain('CRITICAL: canary fired on GitHub Actions');
    expect(JSON.stringify(blocks)).toContain('*Attacker IP*\\n203.0.113.9');
    expect(JSON.stringify(blocks)).toContain('Amsterdam, NL');
    expect(JSON.stringify(blocks)).toContain('*Risk score*\\n91/100');
  });

  it('when a decoy email fired, then the mail server takes the attacker’s place and is named so', () => {
    const text = JSON.stringify(slackMessage(decoyEmail).blocks);
    expect(text).toContain('Mail server (sender’s provider: do not block)');
    expect(text).toContain('198.51.100.7');
    expect(text).not.toContain('Attacker IP');
  });
});

describe('Discord rendering', () => {
  it('when rendered, then the embed is colour-coded by alert level', () => {
    const colours = (['CRITICAL', 'HIGH', 'MEDIUM'] as const).map((alertLevel) => {
      const body: RESTPostAPIWebhookWithTokenJSONBody = discordMessage({
        ...tripwire,
        data: { ...tripwire.data, alertLevel },
      });
      return body.embeds?.[0]?.color;
    });
    expect(new Set(colours).size).toBe(3);
  });

  it('when a test alert is rendered, then it says so', () => {
    expect(discordMessage(testAlertPayload(new Date())).embeds[0]!.title).toMatch(/^\[TEST\]/);
  });
});

describe('email and Telegram renderings', () => {
  const hostile: AlertPayload = {
    ...tripwire,
    data: { ...tripwire.data, platform: '<script>alert(1)</script>', interpretation: 'a & b' },
  };

  it('when rendered, then the text and HTML bodies carry the same facts', () => {
    const { subject, text, html } = emailMessage(tripwire);
    expect(subject).toBe('🔴 CRITICAL: canary fired on GitHub Actions');
    expect(text).toContain('Attacker IP: 203.0.113.9');
    expect(text).toContain('Risk score: 91/100 (critical)');
    expect(html).toContain('<th align="left">Attacker IP</th><td>203.0.113.9</td>');
  });

  it('when fields hold markup, then HTML and Telegram bodies escape it', () => {
    const { html } = emailMessage(hostile);
    const chat = telegramText(hostile);
    for (const body of [html, chat]) {
      expect(body).not.toContain('<script>');
      expect(body).toContain('&#60;script&#62;');
      expect(body).toContain('a &#38; b');
    }
  });

  it('when a decoy email fired, then both name the mail server and not an attacker', () => {
    for (const body of [emailMessage(decoyEmail).text, telegramText(decoyEmail)]) {
      expect(body).toContain('Mail server (sender’s provider: do not block)');
      expect(body).not.toContain('Attacker IP');
    }
  });
});

describe('what leaked, in every rendering', () => {
  const withMemo: AlertPayload = {
    ...tripwire,
    data: { ...tripwire.data, memo: 'prod .env on build box', canaryKind: 'aws_access_key' },
  };
  const renderings = (payload: AlertPayload) => ({
    slack: JSON.stringify(slackMessage(payload)),
    discord: JSON.stringify(discordMessage(payload)),
    email: emailMessage(payload).text,
    emailHtml: emailMessage(payload).html,
    telegram: telegramText(payload),
  });

  it('when a canary with a memo fires, then every rendering shows the memo and where it was planted', () => {
    for (const [channel, body] of Object.entries(renderings(withMemo))) {
      expect([channel, body.includes('prod .env on build box')]).toEqual([channel, true]);
      expect([channel, body.includes('GitHub Actions')]).toEqual([channel, true]);
      expect([channel, body.includes('planted 12 days ago')]).toEqual([channel, true]);
    }
  });

  it('when an agent goes silent, then the alert says so and names the agent, not a planted canary', () => {
    const agent: AlertPayload = {
      ...tripwire,
      data: {
        ...tripwire.data,
        canaryId: 'agt_1',
        canaryKind: 'agent',
        summary: 'agent went silent',
        platform: 'support-bot',
      },
    };
    for (const [channel, body] of Object.entries(renderings(agent))) {
      expect([channel, body.includes('agent went silent on support-bot')]).toEqual([channel, true]);
      expect([channel, body.includes('Agent agt_1')]).toEqual([channel, true]);
      expect([channel, /canary fired|planted \d+ days ago|Memo/.test(body)]).toEqual([
        channel,
        false,
      ]);
    }
  });

  it('when a DNS canary fired, then the resolver is shown as such and no attacker address', () => {
    const dns: AlertPayload = {
      ...withMemo,
      data: {
        ...withMemo.data,
        canaryKind: 'dns',
        attacker: { ...tripwire.data.attacker, ip: '' },
        resolver: { ip: '198.51.100.53', country: 'US', city: '', org: 'Example DNS (AS64500)' },
      },
    };
    expect(alertPayloadSchema.parse(dns)).toEqual(dns);
    for (const body of Object.values(renderings(dns))) {
      expect(body).toContain('DNS resolver (not the attacker)');
      expect(body).not.toContain('Attacker IP');
    }
    const withAttacker = { ...dns, data: { ...dns.data, attacker: tripwire.data.attacker } };
    expect(alertPayloadSchema.safeParse(withAttacker).success).toBe(false);
  });
});
