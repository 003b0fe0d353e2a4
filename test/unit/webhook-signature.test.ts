import { createHmac } from 'node:crypto';
import { signWebhook, verifyWebhookSignature } from '../../src/alerts/webhook-signature';

const secret = 'a-channel-secret-of-32-characters';
const body = Buffer.from('{"version":"1","event":"canary.test_alert"}');
const now = 1_795_000_000_000;
const timestamp = String(now / 1000);

describe('webhook signatures', () => {
  it('when signed, then it equals an independent HMAC over "<timestamp>.<raw body>"', () => {
    const independent = createHmac('sha256', secret)
      .update(`${timestamp}.${body.toString()}`)
      .digest('hex');
    expect(signWebhook(secret, timestamp, body)).toBe(`sha256=${independent}`);
  });

  it('when the receiver checks a fresh, untouched request, then it passes', () => {
    const signature = signWebhook(secret, timestamp, body);
    expect(verifyWebhookSignature(secret, { rawBody: body, timestamp, signature }, now)).toEqual({
      ok: true,
    });
  });

  it.each([
    [
      'a tampered body',
      { rawBody: Buffer.from('{"version":"1","event":"canary.tripwire_triggered"}') },
      /does not match/,
    ],
    ['a wrong secret', { secret: 'another-secret-of-32-characters!!' }, /does not match/],
    ['a timestamp 301 s old', { timestamp: String(now / 1000 - 301) }, /300 s/],
    ['a timestamp 301 s ahead', { timestamp: String(now / 1000 + 301) }, /300 s/],
    ['a missing timestamp', { timestamp: undefined }, /timestamp/],
    ['a non-numeric timestamp', { timestamp: '12e3' }, /timestamp/],
    ['a missing signature', { signature: undefined }, /missing signature/],
    ['a signature without its prefix', { signature: 'x' }, /does not match/],
  ])('when the request has %s, then it is rejected', (_case, change, reason) => {
    const request = { rawBody: body, timestamp, signature: signWebhook(secret, timestamp, body) };
    const { secret: otherSecret, ...rest } = { secret, ...change } as { secret: string } & Partial<
      typeof request
    >;
    const result = verifyWebhookSignature(otherSecret, { ...request, ...rest }, now);
    expect(result.ok).toBe(false);
    expect(result.ok === false && result.reason).toMatch(reason);
  });

  it('when the body is re-serialised JSON instead of the raw bytes, then it fails', () => {
    const raw = Buffer.from('{"a": 1}');
    const signature = signWebhook(secret, timestamp, raw);
    const reserialised = JSON.stringify(JSON.parse(raw.toString()) as unknown);
    expect(
      verifyWebhookSignature(secret, { rawBody: reserialised, timestamp, signature }, now).ok,
    ).toBe(false);
  });
});
