import { facts, headline, messageParts } from '../alert-rendering';
import { isWeeklyDigest, type AlertLevel, type AlertPayload, type EventPayload } from '../payload';
import { commonHeaders, httpProvider } from './provider';

/** PagerDuty's severities for ours: a critical alert pages as critical, the rest less loudly. */
const SEVERITY: Record<AlertLevel, 'critical' | 'error' | 'warning'> = {
  CRITICAL: 'critical',
  HIGH: 'error',
  MEDIUM: 'warning',
};

/**
 * A PagerDuty Events API v2 `trigger` event (POST to `https://events.pagerduty.com/v2/enqueue`).
 * The channel secret is the integration's routing key; the delivery id is the dedup key, so a
 * retry or a resend updates the same incident instead of opening another.
 */
export function pagerDutyEvent(payload: AlertPayload, routingKey: string, deliveryId: string) {
  const { data } = payload;
  return {
    routing_key: routingKey,
    event_action: 'trigger' as const,
    dedup_key: deliveryId,
    payload: {
      // PagerDuty cuts summaries at 1024 characters.
      summary: headline(payload).slice(0, 1024),
      source: data.platform || 'tripwire',
      severity: SEVERITY[data.alertLevel],
      timestamp: data.triggeredAt,
      component: data.canaryId,
      class: payload.event,
      custom_details: {
        ...Object.fromEntries(facts(payload)),
        interpretation: data.interpretation,
        threat_event_id: data.threatEventId,
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
  const parts = messageParts(payload);
  const source = isWeeklyDigest(payload) ? 'tripwire' : payload.data.platform || 'tripwire';
  return {
    routing_key: routingKey,
    payload: {
      summary: parts.title.slice(0, 1024),
      source,
      timestamp: parts.at,
      custom_details: {
        ...Object.fromEntries(parts.facts),
        [isWeeklyDigest(payload) ? 'canaries' : 'interpretation']: parts.text,
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
    if (isWeeklyDigest(payload) || payload.data.test) {
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
