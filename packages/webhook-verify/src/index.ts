/**
 * The check receivers run on tripwire-service's generic webhook deliveries, on Web Crypto alone
 * (`globalThis.crypto.subtle`: Node 20+, Deno, Bun, Cloudflare Workers, browsers), so the same
 * code runs in every one of them and the functions are async.
 *
 * Two signature headers are accepted, both keyed with the channel secret's UTF-8 bytes:
 * - the spec's `X-Service-Signature: sha256=<hex>` = HMAC-SHA256(secret, `<timestamp>.<raw body>`),
 *   the timestamp being `X-Service-Timestamp`, Unix seconds;
 * - Standard Webhooks' `webhook-signature`: space-separated `v1,<base64>` entries, each
 *   HMAC-SHA256(secret, `<webhook-id>.<webhook-timestamp>.<raw body>`). During a secret
 *   rotation's overlap the service sends one entry per secret.
 * A delivery is accepted when any presented signature matches any of the receiver's secrets.
 */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** The headers a delivery carries (header names match in any case). */
export const HEADERS = {
  event: 'x-service-event',
  timestamp: 'x-service-timestamp',
  signature: 'x-service-signature',
  delivery: 'x-service-delivery',
  standardId: 'webhook-id',
  standardTimestamp: 'webhook-timestamp',
  standardSignature: 'webhook-signature',
} as const;

/** The exact bytes received (never re-serialised JSON), or their UTF-8 text. */
export type RawBody = Uint8Array | ArrayBuffer | string;

/** One secret, or several while a rotation overlaps (each is tried). */
export type Secrets = string | readonly string[];

/**
 * Request headers as frameworks present them: Node's plain object (string or string[] values,
 * any case of names) or a Fetch-API `Headers` (Next.js, Hono, Workers, Deno, Bun).
 */
export type HeaderSource =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

export interface SignedRequest {
  rawBody: RawBody;
  timestamp: string | undefined;
  /** `X-Service-Signature`: one `sha256=<hex>` (several, space-separated, are each tried). */
  signature: string | undefined;
}

export type DeliveryCheck =
  { ok: false; reason: string } | { ok: true; event: string; deliveryId: string };

const encoder = new TextEncoder();

function bytes(value: RawBody): Uint8Array {
  return typeof value === 'string' ? encoder.encode(value) : new Uint8Array(value);
}

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

const hmacKey = (secret: string) =>
  globalThis.crypto.subtle.importKey(
    'raw',
    encoder.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign', 'verify'],
  );

/** HMAC-SHA256(secret, prefix + rawBody). */
async function mac(secret: string, prefix: string, rawBody: RawBody): Promise<Uint8Array> {
  const signed = concat(encoder.encode(prefix), bytes(rawBody));
  return new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', await hmacKey(secret), signed));
}

/**
 * Whether `presented` is the MAC of the content under any secret. `subtle.verify` compares the
 * MAC bytes in constant time; every secret is tried, so the time does not say which one matched.
 */
async function anyMatch(
  secrets: readonly string[],
  presented: readonly Uint8Array[],
  prefix: string,
  rawBody: RawBody,
): Promise<boolean> {
  const signed = concat(encoder.encode(prefix), bytes(rawBody));
  const results = await Promise.all(
    secrets.flatMap((secret) =>
      presented.map(async (signature) =>
        globalThis.crypto.subtle.verify('HMAC', await hmacKey(secret), concat(signature), signed),
      ),
    ),
  );
  return results.includes(true);
}

const toHex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

function fromHex(hex: string): Uint8Array | undefined {
  if (!/^(?:[0-9a-f]{2})+$/i.test(hex)) return undefined;
  return Uint8Array.from(hex.match(/../g)!, (pair) => parseInt(pair, 16));
}

function fromBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/** The spec's `X-Service-Signature` value for a delivery: `sha256=<hex>`. */
export async function signWebhook(
  secret: string,
  timestamp: string,
  rawBody: RawBody,
): Promise<string> {
  return `sha256=${toHex(await mac(secret, `${timestamp}.`, rawBody))}`;
}

/** One Standard Webhooks `webhook-signature` entry: `v1,<base64>`. */
export async function signStandardWebhook(
  secret: string,
  id: string,
  timestamp: string,
  rawBody: RawBody,
): Promise<string> {
  return `v1,${btoa(String.fromCharCode(...(await mac(secret, `${id}.${timestamp}.`, rawBody))))}`;
}

const secretList = (secrets: Secrets): readonly string[] =>
  typeof secrets === 'string' ? [secrets] : secrets;

function timestampCheck(timestamp: string | undefined, nowMs: number): SignatureCheck {
  if (!timestamp || !/^\d+$/.test(timestamp))
    return { ok: false, reason: 'missing or non-numeric timestamp' };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS) {
    return { ok: false, reason: `timestamp outside the ${SIGNATURE_TOLERANCE_SECONDS} s window` };
  }
  return { ok: true };
}

/** Space- (or, from joined duplicate headers, comma-space-) separated entries. */
const entries = (value: string | undefined) =>
  (value ?? '').split(/,?\s+/).filter((entry) => entry !== '');

/** The spec's check: `X-Service-Signature` against `<timestamp>.<raw body>`. */
export async function verifyWebhookSignature(
  secrets: Secrets,
  request: SignedRequest,
  nowMs: number = Date.now(),
): Promise<SignatureCheck> {
  const { rawBody, timestamp, signature } = request;
  const fresh = timestampCheck(timestamp, nowMs);
  if (!fresh.ok) return fresh;
  if (!signature) return { ok: false, reason: 'missing signature' };
  const presented = entries(signature)
    .map((entry) => (entry.startsWith('sha256=') ? fromHex(entry.slice(7)) : undefined))
    .filter((b) => b !== undefined);
  const match = await anyMatch(secretList(secrets), presented, `${timestamp}.`, rawBody);
  return match ? { ok: true } : { ok: false, reason: 'signature does not match' };
}

/** Standard Webhooks' check: any `v1,` entry of `webhook-signature`. */
export async function verifyStandardWebhook(
  secrets: Secrets,
  request: {
    rawBody: RawBody;
    id: string | undefined;
    timestamp: string | undefined;
    signature: string | undefined;
  },
  nowMs: number = Date.now(),
): Promise<SignatureCheck> {
  const { rawBody, id, timestamp, signature } = request;
  if (!id) return { ok: false, reason: 'missing webhook-id' };
  const fresh = timestampCheck(timestamp, nowMs);
  if (!fresh.ok) return fresh;
  if (!signature) return { ok: false, reason: 'missing signature' };
  const presented = entries(signature)
    .map((entry) => (entry.startsWith('v1,') ? fromBase64(entry.slice(3)) : undefined))
    .filter((b) => b !== undefined);
  const match = await anyMatch(secretList(secrets), presented, `${id}.${timestamp}.`, rawBody);
  return match ? { ok: true } : { ok: false, reason: 'signature does not match' };
}

/** A header's value by name in any case; a repeated header's values joined by a space. */
export function headerValue(headers: HeaderSource, name: string): string | undefined {
  if (typeof headers.get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const wanted = name.toLowerCase();
  const values = Object.entries(headers as Record<string, string | readonly string[] | undefined>)
    .filter(([key, value]) => key.toLowerCase() === wanted && value !== undefined)
    .flatMap(([, value]) => value!);
  return values.length ? values.join(' ') : undefined;
}

/**
 * The check on a request as a framework presents it: its headers and the raw body bytes. Accepts
 * the delivery when the spec's `X-Service-Signature` or the Standard Webhooks `webhook-signature`
 * holds for one of the secrets: during a rotation's overlap the spec's header is signed with the
 * old secret only, the Standard Webhooks header with both. Returns the event and delivery id, for
 * de-duplication (a retry or a resend carries the same delivery id).
 */
export async function verifyDelivery(
  secrets: Secrets,
  headers: HeaderSource,
  rawBody: RawBody,
  nowMs: number = Date.now(),
): Promise<DeliveryCheck> {
  const header = (name: string) => headerValue(headers, name);
  const spec = header(HEADERS.signature);
  const standard = header(HEADERS.standardSignature);
  const checks = [
    spec &&
      (() =>
        verifyWebhookSignature(
          secrets,
          { rawBody, timestamp: header(HEADERS.timestamp), signature: spec },
          nowMs,
        )),
    standard &&
      (() =>
        verifyStandardWebhook(
          secrets,
          {
            rawBody,
            id: header(HEADERS.standardId),
            timestamp: header(HEADERS.standardTimestamp),
            signature: standard,
          },
          nowMs,
        )),
  ].filter((check) => typeof check === 'function');
  let refusal: SignatureCheck = { ok: false, reason: 'missing signature' };
  for (const check of checks) {
    const result = await check();
    if (result.ok) {
      return {
        ok: true,
        event: header(HEADERS.event) ?? '',
        deliveryId: header(HEADERS.delivery) ?? header(HEADERS.standardId) ?? '',
      };
    }
    if (check === checks[0]) refusal = result;
  }
  return refusal;
}
