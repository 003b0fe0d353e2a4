import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signing of generic webhook deliveries, and the check receivers run (exported for them):
 * `X-Service-Signature: sha256=<hex>` = HMAC-SHA256(secret, `<timestamp>.<raw body>`), where the
 * timestamp is `X-Service-Timestamp`, Unix seconds.
 */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export function signWebhook(secret: string, timestamp: string, rawBody: Buffer | string): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
  return `sha256=${mac}`;
}

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

export interface SignedRequest {
  /** The exact bytes received: never re-serialised JSON. */
  rawBody: Buffer | string;
  timestamp: string | undefined;
  signature: string | undefined;
}

export function verifyWebhookSignature(
  secret: string,
  request: SignedRequest,
  nowMs: number = Date.now(),
): SignatureCheck {
  const { rawBody, timestamp, signature } = request;
  if (!timestamp || !/^\d+$/.test(timestamp))
    return { ok: false, reason: 'missing or non-numeric timestamp' };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS) {
    return { ok: false, reason: 'timestamp outside the 300 s window' };
  }
  if (!signature) return { ok: false, reason: 'missing signature' };
  const expected = Buffer.from(signWebhook(secret, timestamp, rawBody));
  const presented = Buffer.from(signature);
  const match = expected.length === presented.length && timingSafeEqual(expected, presented);
  return match ? { ok: true } : { ok: false, reason: 'signature does not match' };
}
