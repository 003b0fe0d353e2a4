import type { KnownBlock } from '@slack/types';
import {
  discordMessage,
  emailMessage,
  slackMessage,
  telegramText,
} from '../../src/alerts/alert-rendering';
import {
  alertPayloadSchema,
  parseEventPayload,
  testAlertPayload,
  weeklyDigestPayloadSchema,
  type WeeklyDigestPayload,
} from '../../src/alerts/payload';
import { pagerDutyProvider, PAGERDUTY_CHANGE_PATH } from '../../src/alerts/providers/pagerduty';
import { teamsMessage } from '../../src/alerts/providers/teams';
import { webhookProvider } from '../../src/alerts/providers/webhook';

const digest: WeeklyDigestPayload = {
  version: '1',
  event: 'account.weekly_digest',
  sentAt: '2026-11-23T08:00:00.000Z',
  data: {
    event: 'account.weekly_digest',
    accountId: 'usr_1',
    from: '2026-11-16T08:00:00.000Z',
    to: '2026-11-23T08:00:00.000Z',
    timeZone: 'Europe/Berlin',
    totalHits: 5,
    canaries: [
      {
        canaryId: 'cnr_a',
        kind: 'aws_key',
        memo: 'prod .env <build box>',
        hits: 4,
        byDay: [
          { key: '2026-11-18', count: 3 },
          { key: '2026-11-20', count: 1 },
        ],
      },
      {
        canaryId: 'cnr_b',
        kind: 'url',
        memo: '',
        hits: 1,
        byDay: [{ key: '2026-11-22', count: 1 }],
      },
    ],
    sourcesByCountry: [
      { key: 'NL', count: 2 },
      { key: 'unknown', count: 1 },
    ],
    deliveriesByOutcome: [
      { key: 'delivered', count: 3 },
      { key: 'failed', count: 1 },
    ],
    stillFailing: [
      {
        channelId: 'ch_1',
        name: 'ops hook',
        kind: 'webhook',
        lastError: 'HTTP 500',
        lastErrorAt: '2026-11-22T10:00:00.000Z',
        failedThisWeek: 1,
      },
    ],
    threatEventId: null,
  },
};

const alert = { deliveryId: 'weekly-digest-usr_1-now-x:ch_1', now: new Date() };

describe('the weekly digest payload', () => {
  it('when well formed, then it passes as an event payload, but never as a v1 alert', () => {
    expect(weeklyDigestPayloadSchema.parse(digest)).toEqual(digest);
    expect(parseEventPayload(digest).data).toEqual(digest);
    expect(alertPayloadSchema.safeParse(digest).success).toBe(false);
    // The spec's two events pass as they always did.
    const test = testAlertPayload(new Date(0));
    expect(parseEventPayload(test).data).toEqual(alertPayloadSchema.parse(test));
  });

  it('when a field is missing or an alert field sneaks in, then it is refused', () => {
    const data: Partial<WeeklyDigestPayload['data']> = { ...digest.data };
    delete data.stillFailing;
    expect(weeklyDigestPayloadSchema.safeParse({ ...digest, data }).success).toBe(false);
    const extra = { ...digest, data: { ...digest.data, alertLevel: 'HIGH' } };
    expect(parseEventPayload(extra).success).toBe(false);
  });
});

describe('the weekly digest on every provider', () => {
  const headline = '📊 Weekly digest: 5 hits on 2 canaries · 1 channel failing';

  it('when rendered for Slack, Discord and Teams, then each leads with the week’s totals', () => {
    const slack = slackMessage(digest);
    expect(slack.text).toBe(headline);
    const blocks: KnownBlock[] = slack.blocks;
    expect(JSON.stringify(blocks)).toContain('prod .env <build box> (aws_key, cnr_a): 4 hits');
    expect(JSON.stringify(blocks)).toContain('2026-11-18: 3, 2026-11-20: 1');

    const [embed] = discordMessage(digest).embeds;
    expect(embed!.title).toBe(headline);
    expect(embed!.timestamp).toBe(digest.data.to);
    expect(embed!.fields).toContainEqual({
      name: 'Week',
      value: '2026-11-16 to 2026-11-23 (Europe/Berlin)',
      inline: true,
    });
    expect(embed!.fields).toContainEqual({
      name: 'Sources by country',
      value: 'NL 2, unknown 1',
      inline: true,
    });

    const card = teamsMessage(digest).attachments[0]!.content.body;
    expect(card[0]).toEqual(expect.objectContaining({ text: headline, color: 'Accent' }));
  });

  it('when sent by email or chat, then the failing channel is named and markup is escaped', () => {
    const mail = emailMessage(digest);
    expect(mail.subject).toBe(headline);
    expect(mail.text).toContain('Still failing: webhook "ops hook": HTTP 500');
    expect(mail.html).toContain('prod .env &#60;build box&#62;');
    expect(mail.html).not.toContain('<build box>');
    const chat = telegramText(digest);
    expect(chat).toContain('<b>Deliveries:</b> delivered 3, failed 1');
    expect(chat).not.toContain('<build box>');
  });

  it('when sent to PagerDuty, then it is a change event and never opens an incident', () => {
    const message = pagerDutyProvider.render(
      { ...alert, payload: digest },
      { secret: 'routing-key-0123456789' },
    );
    expect(message.path).toBe(PAGERDUTY_CHANGE_PATH);
    const body = JSON.parse(message.body) as Record<string, unknown>;
    expect(body).not.toHaveProperty('event_action');
    expect(body).toEqual({
      routing_key: 'routing-key-0123456789',
      payload: expect.objectContaining({
        summary: headline,
        source: 'tripwire',
        timestamp: digest.data.to,
      }),
    });
  });

  it('when sent to a generic webhook, then the body is the payload as it is, under its event', () => {
    const message = webhookProvider.render(
      { ...alert, payload: digest },
      { secret: 'a-secret-of-at-least-16-chars' },
    );
    expect(JSON.parse(message.body)).toEqual(digest);
    expect(message.headers['X-Service-Event']).toBe('account.weekly_digest');
  });

  it('when nothing fired, then the digest says so', () => {
    const quiet = {
      ...digest,
      data: { ...digest.data, totalHits: 0, canaries: [], stillFailing: [], sourcesByCountry: [] },
    };
    expect(slackMessage(quiet).text).toBe('📊 Weekly digest: 0 hits on 0 canaries');
    expect(emailMessage(quiet).text).toContain('No canary fired this week.');
    expect(emailMessage(quiet).text).toContain('Sources by country: none');
  });
});
