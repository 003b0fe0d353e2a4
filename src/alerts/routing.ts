import { ALERT_EVENTS, ALERT_LEVELS, type AlertEvent, type AlertLevel } from './payload';
import type { AlertChannel } from './channels.repository';

/** The alert as routing sees it; `level` is null for payloads without one. */
export interface RoutedAlert {
  event: string;
  level: string | null;
}

/** CRITICAL ranks highest; ALERT_LEVELS lists them highest first. */
const rank = (level: string) => ALERT_LEVELS.length - ALERT_LEVELS.indexOf(level as AlertLevel);

const isAlertEvent = (event: string): event is AlertEvent =>
  (ALERT_EVENTS as readonly string[]).includes(event);

/**
 * Whether a channel subscribes to an alert: its event kind is among the channel's (all when
 * none are chosen) and its level is at least the channel's minimum (any when none is set). A
 * notice about the account's own channels (`channel.disabled`, no level) goes to every channel.
 */
export function subscribes(
  channel: Pick<AlertChannel, 'events' | 'minLevel'>,
  alert: RoutedAlert,
): boolean {
  if (channel.events && isAlertEvent(alert.event) && !channel.events.includes(alert.event)) {
    return false;
  }
  if (!channel.minLevel || !alert.level) return true;
  return rank(alert.level) >= rank(channel.minLevel);
}
