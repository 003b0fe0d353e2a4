import { facts, headline } from '../alert-rendering';
import type { AlertLevel, AlertPayload } from '../payload';
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

export const pagerDutyProvider = httpProvider({
  secret: 'required',
  secretLabel: 'Events API v2 routing key',
  render(alert, channel) {
    if (!channel.secret) throw new Error('a PagerDuty channel has no routing key');
    return {
      body: JSON.stringify(pagerDutyEvent(alert.payload, channel.secret, alert.deliveryId)),
      headers: commonHeaders(alert),
    };
  },
});
