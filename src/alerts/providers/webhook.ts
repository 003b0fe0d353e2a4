import { createHmac } from 'node:crypto';
import { signWebhook } from '../webhook-signature';
import { commonHeaders, httpProvider } from './provider';

/**
 * Standard Webhooks (standardwebhooks.com) signature: base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`.
 * Its key is the channel secret's UTF-8 bytes, so receivers give their library
 * `whsec_` + base64(secret).
 */
export function standardWebhookSignature(
  secret: string,
  id: string,
  timestamp: string,
  body: string,
): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${id}.${timestamp}.${body}`)
    .digest('base64');
  return `v1,${mac}`;
}

/**
 * The generic webhook: the v1 payload as it is, signed with the channel secret (the spec's
 * headers). During a rotation's overlap the spec's `X-Service-Signature`, which holds exactly one
 * `sha256=<hex>`, stays signed with the secret being replaced, so receivers not yet updated keep
 * verifying (and receivers that try both secrets verify with either); the Standard Webhooks
 * header carries a signature for each secret, the new one first. After the overlap, only the new.
 */
export const webhookProvider = httpProvider({
  secret: 'required',
  secretLabel: 'HMAC signing key',
  render(alert, channel) {
    if (!channel.secret) throw new Error('a generic webhook channel has no secret');
    const secrets = [channel.secret, ...(channel.previousSecret ? [channel.previousSecret] : [])];
    const body = JSON.stringify(alert.payload);
    const timestamp = String(Math.floor(alert.now.getTime() / 1000));
    return {
      body,
      headers: {
        ...commonHeaders(alert),
        'X-Service-Event': alert.payload.event,
        'X-Service-Timestamp': timestamp,
        'X-Service-Signature': signWebhook(secrets.at(-1)!, timestamp, body),
        ...(channel.standardWebhooks && {
          'webhook-id': alert.deliveryId,
          'webhook-timestamp': timestamp,
          'webhook-signature': secrets
            .map((secret) => standardWebhookSignature(secret, alert.deliveryId, timestamp, body))
            .join(' '),
        }),
      },
    };
  },
});
