import { createHmac } from 'node:crypto';
import {
  headerValue,
  signStandardWebhook,
  signWebhook,
  verifyDelivery,
} from '../../packages/webhook-verify/src/index';
import { signWebhook as serviceSign } from '../../src/alerts/webhook-signature';

// The receivers' package on Web Crypto: the same check whatever shape the headers come in, any
// of several signatures against any of several secrets, and the refusals.
const secret = 'a-channel-secret-of-32-characters';
const previous = 'the-secret-being-rotated-out-now!';
const body = Buffer.from('{"version":"1","event":"canary.test_alert","data":{"test":true}}');
const now = 1_795_000_000_000;
const timestamp = String(now / 1000);
const id = 'dlv_0123456789';

/** A delivery's headers as the service sends them, both signature schemes, for `secrets`. */
async function deliveryHeaders(secrets: string[], signedBody: Buffer = body) {
  return {
    'X-Service-Event': 'canary.test_alert',
    'X-Service-Delivery': id,
    'X-Service-Timestamp': timestamp,
    'X-Service-Signature': serviceSign(secrets.at(-1)!, timestamp, signedBody),
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': (
      await Promise.all(secrets.map((s) => signStandardWebhook(s, id, timestamp, signedBody)))
    ).join(' '),
  };
}
const lowerCase = (h: Record<string, string>) =>
  Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
const accepted = { ok: true, event: 'canary.test_alert', deliveryId: id };

describe('signing', () => {
  it('when the package signs, then it matches the service and an independent HMAC, byte for byte', async () => {
    const independent = createHmac('sha256', secret).update(`${timestamp}.`).update(body);
    expect(await signWebhook(secret, timestamp, body)).toBe(`sha256=${independent.digest('hex')}`);
    expect(await signWebhook(secret, timestamp, body)).toBe(serviceSign(secret, timestamp, body));
    const standard = createHmac('sha256', secret).update(`${id}.${timestamp}.`).update(body);
    expect(await signStandardWebhook(secret, id, timestamp, body)).toBe(
      `v1,${standard.digest('base64')}`,
    );
  });
});

describe('verifyDelivery: header shapes', () => {
  it('when the headers are a plain object in any case of names, then it accepts', async () => {
    const headers = await deliveryHeaders([secret]);
    expect(await verifyDelivery(secret, headers, body, now)).toEqual(accepted);
    expect(await verifyDelivery(secret, lowerCase(headers), body, now)).toEqual(accepted);
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    expect(await verifyDelivery(secret, upper, body, now)).toEqual(accepted);
  });

  it('when a plain object holds string[] values, then each entry is tried', async () => {
    const headers = lowerCase(await deliveryHeaders([secret, previous]));
    const asArrays = { ...headers, 'webhook-signature': headers['webhook-signature']!.split(' ') };
    delete (asArrays as Record<string, unknown>)['x-service-signature'];
    expect(await verifyDelivery(secret, asArrays, body, now)).toEqual(accepted);
    expect(headerValue({ 'X-A': ['1', '2'], 'x-a': '3' }, 'x-a')).toBe('1 2 3');
  });

  it('when the headers are a Fetch Headers, then it accepts the body as bytes or text', async () => {
    const headers = new Headers(await deliveryHeaders([secret]));
    expect(await verifyDelivery(secret, headers, body, now)).toEqual(accepted);
    const request = new Request('https://receiver.test/hook', { method: 'POST', headers, body });
    expect(
      await verifyDelivery(secret, request.headers, await request.clone().arrayBuffer(), now),
    ).toEqual(accepted);
    expect(await verifyDelivery(secret, request.headers, await request.text(), now)).toEqual(
      accepted,
    );
  });
});

describe('verifyDelivery: several signatures and secrets', () => {
  it('when the Standard Webhooks header carries one signature per secret, then either secret verifies it', async () => {
    const headers = new Headers(await deliveryHeaders([secret, previous]));
    headers.delete('x-service-signature');
    expect(await verifyDelivery(secret, headers, body, now)).toEqual(accepted);
    expect(await verifyDelivery(previous, headers, body, now)).toEqual(accepted);
    expect(await verifyDelivery('a-third-secret-of-32-characters!', headers, body, now)).toEqual({
      ok: false,
      reason: 'signature does not match',
    });
  });

  it('when the spec header is signed with the old secret, then a receiver holding only the new one verifies through the Standard Webhooks header', async () => {
    const headers = await deliveryHeaders([secret, previous]);
    expect(await verifyDelivery(secret, headers, body, now)).toEqual(accepted);
    const specOnly = { ...headers, 'webhook-signature': undefined };
    expect(await verifyDelivery(secret, specOnly, body, now)).toMatchObject({ ok: false });
    expect(await verifyDelivery([secret, previous], specOnly, body, now)).toEqual(accepted);
  });

  it('when repeated headers are joined by Fetch, then every entry is still found', async () => {
    const headers = new Headers(lowerCase(await deliveryHeaders([previous])));
    headers.delete('x-service-signature');
    headers.append('webhook-signature', await signStandardWebhook(secret, id, timestamp, body));
    expect(headers.get('webhook-signature')).toMatch(/^v1,\S+, v1,\S+$/);
    expect(await verifyDelivery(secret, headers, body, now)).toEqual(accepted);
  });
});

describe('verifyDelivery: refusals', () => {
  it.each([
    ['a wrong secret', { secrets: ['another-secret-of-32-characters!!'] }, /does not match/],
    ['a tampered body', { rawBody: Buffer.concat([body, Buffer.from(' ')]) }, /does not match/],
    ['a timestamp 301 s old', { nowMs: now + 301_000 }, /300 s window/],
    ['a timestamp 301 s ahead', { nowMs: now - 301_000 }, /300 s window/],
  ])('when the delivery has %s, then both headers refuse it', async (_case, change, reason) => {
    const { secrets, rawBody, nowMs } = { secrets: [secret], rawBody: body, nowMs: now, ...change };
    const headers = await deliveryHeaders([secret]);
    const standardOnly = { ...headers, 'X-Service-Signature': undefined };
    for (const shape of [headers, new Headers(lowerCase(headers)), standardOnly]) {
      const result = await verifyDelivery(secrets, shape, rawBody, nowMs);
      expect(result.ok).toBe(false);
      expect(!result.ok && result.reason).toMatch(reason);
    }
  });

  it.each([
    ['no signature header', {}, /missing signature/],
    ['a signature without its prefix', { 'x-service-signature': 'deadbeef' }, /does not match/],
    [
      'a Standard Webhooks entry of another version',
      { 'webhook-signature': 'v2,AAAA' },
      /does not match/,
    ],
    ['no webhook-id', { 'webhook-signature': 'v1,AAAA' }, /webhook-id/],
    [
      'a non-numeric timestamp',
      { 'x-service-timestamp': '12e3', 'x-service-signature': 'sha256=00' },
      /timestamp/,
    ],
  ])('when the delivery has %s, then it is refused', async (_case, headers, reason) => {
    const withId =
      'webhook-id' in headers || _case.startsWith('no webhook') ? {} : { 'webhook-id': id };
    const result = await verifyDelivery(
      secret,
      { 'x-service-timestamp': timestamp, 'webhook-timestamp': timestamp, ...withId, ...headers },
      body,
      now,
    );
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toMatch(reason);
  });
});
