import { discordMessage, slackMessage } from './alert-rendering';
import type { AlertChannel } from './channels.repository';
import { alertPayloadSchema, type AlertPayload } from './payload';
import { signWebhook } from './webhook-signature';

export const USER_AGENT = 'Service-Webhook/1.0';
/** Lets receivers drop a delivery they already have (a retry after a lost answer). */
export const DELIVERY_ID_HEADER = 'X-Service-Delivery';

/** The exact bytes and headers one channel receives for an alert. */
export function channelRequest(
  channel: Pick<AlertChannel, 'kind' | 'secret'>,
  payload: AlertPayload,
  deliveryId: string,
  now: Date,
): { body: string; headers: Record<string, string> } {
  const checked = alertPayloadSchema.parse(payload);
  const common = {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    [DELIVERY_ID_HEADER]: deliveryId,
  };
  switch (channel.kind) {
    case 'slack':
      return { body: JSON.stringify(slackMessage(checked)), headers: common };
    case 'discord':
      return { body: JSON.stringify(discordMessage(checked)), headers: common };
    case 'webhook': {
      if (!channel.secret) throw new Error('a generic webhook channel has no secret');
      const body = JSON.stringify(checked);
      const timestamp = String(Math.floor(now.getTime() / 1000));
      return {
        body,
        headers: {
          ...common,
          'X-Service-Event': checked.event,
          'X-Service-Timestamp': timestamp,
          'X-Service-Signature': signWebhook(channel.secret, timestamp, body),
        },
      };
    }
  }
}
