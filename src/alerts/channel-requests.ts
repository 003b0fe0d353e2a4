import type { AlertChannel } from './channels.repository';
import { alertPayloadSchema, type AlertPayload } from './payload';
import { CHANNEL_PROVIDERS } from './providers';
import type { HttpMessage } from './providers/provider';

export { DELIVERY_ID_HEADER, USER_AGENT } from './providers/provider';

/** The exact bytes and headers one channel receives for an alert (its kind's provider renders them). */
export function channelRequest(
  channel: Pick<AlertChannel, 'kind' | 'secret'> & { standardWebhooks?: boolean },
  payload: AlertPayload,
  deliveryId: string,
  now: Date,
): HttpMessage {
  return CHANNEL_PROVIDERS[channel.kind].render(
    { payload: alertPayloadSchema.parse(payload), deliveryId, now },
    channel,
  );
}
