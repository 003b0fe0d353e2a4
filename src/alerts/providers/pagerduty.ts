import { messageParts } from '../alert-rendering';
import { isChannelNotice, isWeeklyDigest, type AlertLevel, type EventPayload } from '../payload';
import { commonHeaders, httpProvider } from './provider';

/** PagerDuty's severities for ours: a critical alert pages as critical, the rest less loudly. */
const SEVERITY: Record<AlertLevel, 'critical' | 'error' | 'warning'> = {
  CRITICAL: 'critical',
  HIGH: 'error',
  MEDIUM: 'warning',
};

/** Where the event comes from and what it is about, as PagerDuty groups them. */
function origin(payload: EventPayload) {
  if (isChannelNotice(payload)) return { source: 'tripwire', component: payload.data.channelId };
  if (isWeeklyDigest(payload)) return { source: 'tripwire', component: payload.data.accountId };
  return { source: payload.data.platform || 'tripwire', component: payload.data.canaryId };
}

/**
 * A PagerDuty Events API v2 `trigger` event (POST to `https://events.pagerduty.com/v2/enqueue`).
 * The channel secret is the integration's routing key; the delivery id is the dedup key, so a
 * retry or a resend updates the same incident instead of opening another. A disabled channel's
 * notice triggers too (as a warning): alerts no longer reach that channel, and someone must act.
 */
export function pagerDutyEvent(payload: EventPayload, routingKey: string, deliveryId: string) {
  const message = messageParts(payload);
  const { source, component } = origin(payload);
  return {
    routing_key: routingKey,
    event_action: 'trigger' as const,
    dedup_key: deliveryId,
    payload: {
      // PagerDuty cuts summaries at 1024 characters.
      summary: message.title.slice(0, 1024),
      source,
      severity: message.level && !isChannelNotice(payload) ? SEVERITY[message.level] : 'warning',
      timestamp: message.at,
      component,
      class: payload.event,
      custom_details: {
        ...Object.fromEntries(message.facts),
        interpretation: message.text,
        threat_event_id: payload.data.threatEventId,
      },
    },
    client: 'Tripwire',
  };
}

/** Where PagerDuty takes change events, beside `/v2/enqueue` on the same host. */
export const PAGERDUTY_CHANGE_PATH = '/v2/change/enqueue';

/**
 * A channel test or a weekly digest as a PagerDuty Events API v2 change event: it shows on the
 * service's timeline and never opens an incident or pages anyone (the spec: a test is never
 * treated as an incident; a digest is a report, not an incident either).
 */
export function pagerDutyChangeEvent(payload: EventPayload, routingKey: string) {
  const message = messageParts(payload);
  return {
    routing_key: routingKey,
    payload: {
      summary: message.title.slice(0, 1024),
      source: origin(payload).source,
      timestamp: message.at,
      custom_details: {
        ...Object.fromEntries(message.facts),
        [isWeeklyDigest(payload) ? 'canaries' : 'interpretation']: message.text,
      },
    },
  };
}

export const pagerDutyProvider = httpProvider({
  secret: 'required',
  secretLabel: 'Events API v2 routing key',
  render(alert, channel) {
    if (!channel.secret) throw new Error('a PagerDuty channel has no routing key');
    const { payload } = alert;
    if (isWeeklyDigest(payload) || (!isChannelNotice(payload) && payload.data.test)) {
      return {
        body: JSON.stringify(pagerDutyChangeEvent(payload, channel.secret)),
        headers: commonHeaders(alert),
        path: PAGERDUTY_CHANGE_PATH,
      };
    }
    return {
      body: JSON.stringify(pagerDutyEvent(payload, channel.secret, alert.deliveryId)),
      headers: commonHeaders(alert),
    };
  },
});
