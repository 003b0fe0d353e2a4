import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  SIGNATURE_TOLERANCE_SECONDS,
  type SignatureCheck,
  type SignedRequest,
} from '../../packages/webhook-verify/src/index';

export { SIGNATURE_TOLERANCE_SECONDS, type SignatureCheck, type SignedRequest };

/**
 * The spec's `X-Service-Signature: sha256=<hex>` = HMAC-SHA256(secret, `<timestamp>.<raw body>`),
 * computed synchronously with node:crypto while the provider renders a delivery. Receivers check
 * it with `packages/webhook-verify`, which runs on Web Crypto alone and is therefore async; the
 * unit test `webhook-verify-package.test.ts` holds the two to the same bytes.
 */
export function signWebhook(secret: string, timestamp: string, rawBody: Buffer | string): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
  return `sha256=${mac}`;
}

/** The spec's check, synchronous, for the service's own tests and benchmarks of its deliveries. */
export function verifyWebhookSignature(
  secret: string,
  request: { rawBody: Buffer | string } & Omit<SignedRequest, 'rawBody'>,
  nowMs: number = Date.now(),
): SignatureCheck {
  const { rawBody, timestamp, signature } = request;
  if (!timestamp || !/^\d+$/.test(timestamp))
    return { ok: false, reason: 'missing or non-numeric timestamp' };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS) {
    return { ok: false, reason: `timestamp outside the ${SIGNATURE_TOLERANCE_SECONDS} s window` };
  }
  if (!signature) return { ok: false, reason: 'missing signature' };
  const expected = Buffer.from(signWebhook(secret, timestamp, rawBody));
  const presented = Buffer.from(signature);
  const match = expected.length === presented.length && timingSafeEqual(expected, presented);
  return match ? { ok: true } : { ok: false, reason: 'signature does not match' };
}
