import { channelDisabledPayload } from '../../src/alerts/alert-outcomes';
import type { AlertChannel } from '../../src/alerts/channels.repository';
import {
  alertPayloadSchema,
  channelDisabledPayloadSchema,
  parseEventPayload,
} from '../../src/alerts/payload';
import { CHANNEL_PROVIDERS } from '../../src/alerts/providers';
import { smtpServer } from '../../src/alerts/providers/email';
import { PAGERDUTY_CHANGE_PATH } from '../../src/alerts/providers/pagerduty';
import { subscribes } from '../../src/alerts/routing';

const disabledAt = new Date('2026-11-25T12:00:00.000Z');
const channel: AlertChannel = {
  id: 'chn_down',
  accountId: 'usr_1',
  kind: 'webhook',
  name: 'ops <receiver>',
  url: 'https://alerts.example.com/hook',
  secret: 'a-secret-of-16-chars',
  previousSecret: null,
  disabled: true,
  events: null,
  minLevel: null,
  standardWebhooks: true,
  lastError: { message: 'HTTP 503', status: 503, at: disabledAt },
  lastDeliveryAt: new Date('2026-11-19T08:00:00.000Z'),
  failingSince: new Date('2026-11-20T09:00:00.000Z'),
  disabledReason:
    'its deliveries kept failing for longer than 5d with nothing delivered (CHANNEL_DISABLE_AFTER)',
  disabledAt,
  createdAt: new Date('2026-11-01T00:00:00.000Z'),
  updatedAt: disabledAt,
};
const payload = channelDisabledPayload(channel, disabledAt);
const alert = { payload, deliveryId: 'notice-1:chn_other', now: disabledAt };
const http = { secret: 'another-secret-16ch', standardWebhooks: true };

describe('the channel.disabled notice', () => {
  it('when made, then it passes its own schema and neither v1 alert schema takes it', () => {
    expect(channelDisabledPayloadSchema.parse(payload)).toEqual(payload);
    expect(parseEventPayload(payload).success).toBe(true);
    expect(alertPayloadSchema.safeParse(payload).success).toBe(false);
    expect(payload.data).toMatchObject({
      channelId: 'chn_down',
      failingSince: '2026-11-20T09:00:00.000Z',
      lastDeliveryAt: '2026-11-19T08:00:00.000Z',
      lastError: { message: 'HTTP 503', status: 503 },
      threatEventId: null,
    });
  });

  it('when a field is missing or another is added, then its schema refuses it', () => {
    const data: Partial<typeof payload.data> = { ...payload.data };
    delete data.reason;
    expect(channelDisabledPayloadSchema.safeParse({ ...payload, data }).success).toBe(false);
    expect(channelDisabledPayloadSchema.safeParse({ ...payload, extra: 1 }).success).toBe(false);
    expect(
      channelDisabledPayloadSchema.safeParse({ ...payload, data: { ...payload.data, test: true } })
        .success,
    ).toBe(false);
  });

  it('when routed, then it reaches channels whatever events and level they chose', () => {
    const routed = { event: payload.event, level: null };
    expect(
      subscribes({ events: ['canary.tripwire_triggered'], minLevel: 'CRITICAL' }, routed),
    ).toBe(true);
    expect(
      subscribes(
        { events: ['canary.test_alert'], minLevel: null },
        { event: 'canary.tripwire_triggered', level: 'HIGH' },
      ),
    ).toBe(false);
  });

  it.each(['slack', 'discord', 'teams', 'pagerduty'] as const)(
    'when rendered for %s, then it names the channel, the reason and how to enable it again',
    (kind) => {
      const { body, path } = CHANNEL_PROVIDERS[kind].render(alert, http);
      expect(body).toContain('Alert channel disabled: webhook \\"ops <receiver>\\"');
      expect(body).toContain('(CHANNEL_DISABLE_AFTER)');
      expect(body).toContain('PATCH /api/alert-channels/chn_down');
      expect(body).toContain('2026-11-20T09:00:00.000Z');
      expect(path).toBeUndefined();
    },
  );

  it('when sent to PagerDuty, then it is a warning trigger about the channel, not a change event', () => {
    const message = CHANNEL_PROVIDERS.pagerduty.render(alert, http);
    expect(message.path).not.toBe(PAGERDUTY_CHANGE_PATH);
    expect(JSON.parse(message.body)).toMatchObject({
      event_action: 'trigger',
      dedup_key: alert.deliveryId,
      payload: { severity: 'warning', component: 'chn_down', class: 'channel.disabled' },
    });
  });

  it('when sent to a generic webhook, then the body is the notice and the event header names it', () => {
    const { body, headers } = CHANNEL_PROVIDERS.webhook.render(alert, http);
    expect(JSON.parse(body)).toEqual(payload);
    expect(headers['X-Service-Event']).toBe('channel.disabled');
    expect(headers['webhook-id']).toBe(alert.deliveryId);
  });

  it('when sent by email and Telegram, then both carry it, markup escaped', () => {
    const email = CHANNEL_PROVIDERS.email.render(alert, {
      address: 'owner@example.com',
      smtp: smtpServer('smtp://127.0.0.1:2525', 'alerts@localhost'),
    });
    expect(email.subject).toBe('🟠 Alert channel disabled: webhook "ops <receiver>"');
    expect(email.text).toContain('Last error: 503: HTTP 503');
    expect(email.html).toContain('ops &#60;receiver&#62;');
    expect(email.headers['X-Service-Event']).toBe('channel.disabled');
    const chat = CHANNEL_PROVIDERS.chat.render(alert, {
      chatId: '42',
      bot: { token: 't', apiBase: 'https://api.telegram.org' },
    });
    const text = (JSON.parse(chat.body) as { text: string }).text;
    expect(text).toContain('ops &#60;receiver&#62;');
    expect(text).toContain('Last delivered:</b> 2026-11-19T08:00:00.000Z');
  });
});
