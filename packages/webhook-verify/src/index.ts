import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signing of tripwire-service's generic webhook deliveries, and the check receivers run:
 * `X-Service-Signature: sha256=<hex>` = HMAC-SHA256(secret, `<timestamp>.<raw body>`), where the
 * timestamp is `X-Service-Timestamp`, Unix seconds. The service signs with this very module.
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

/** The headers a delivery carries (lower-case, as Node presents them). */
export const HEADERS = {
  event: 'x-service-event',
  timestamp: 'x-service-timestamp',
  signature: 'x-service-signature',
  delivery: 'x-service-delivery',
} as const;

type Headers = Record<string, string | string[] | undefined>;

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * The same check on a request as a framework presents it: its headers (Node's lower-case names)
 * and the raw body bytes. Returns the event and delivery id when the signature holds, for
 * de-duplication (a retry or a resend carries the same delivery id).
 */
export function verifyDelivery(
  secret: string,
  headers: Headers,
  rawBody: Buffer | string,
  nowMs: number = Date.now(),
): (SignatureCheck & { ok: false }) | { ok: true; event: string; deliveryId: string } {
  const check = verifyWebhookSignature(
    secret,
    {
      rawBody,
      timestamp: first(headers[HEADERS.timestamp]),
      signature: first(headers[HEADERS.signature]),
    },
    nowMs,
  );
  if (!check.ok) return check;
  return {
    ok: true,
    event: first(headers[HEADERS.event]) ?? '',
    deliveryId: first(headers[HEADERS.delivery]) ?? '',
  };
}
