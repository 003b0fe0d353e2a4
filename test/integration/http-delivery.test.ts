import { createHmac } from 'node:crypto';
import { channelRequest, DELIVERY_ID_HEADER } from '../../src/alerts/channel-requests';
import { postOnce } from '../../src/alerts/http-delivery';
import { testAlertPayload } from '../../src/alerts/payload';
import { verifyWebhookSignature } from '../../src/alerts/webhook-signature';
import { freePort } from '../../tools/stack';
import { Receiver } from '../support/receiver';

let receiver: Receiver;

beforeAll(async () => {
  receiver = await Receiver.start();
});
afterAll(() => receiver.stop());

const target = (path: string, address = '127.0.0.1') => ({
  url: new URL(receiver.url(path)),
  address,
  family: 4 as const,
});
const secret = 'receiver-shared-secret-0123';

describe('one delivery attempt over real HTTPS', () => {
  it('when a generic webhook is sent, then the receiver gets the spec headers and a verifiable signature', async () => {
    const now = new Date();
    const { body, headers } = channelRequest(
      { kind: 'webhook', secret },
      testAlertPayload(now),
      'dlv_1',
      now,
    );
    expect(await postOnce(target('/hook'), body, headers)).toMatchObject({
      kind: 'response',
      status: 200,
    });
    const [hit] = receiver.hitsOn('/hook');
    expect(hit!.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Service-Webhook/1.0',
      'x-service-event': 'canary.test_alert',
      'x-service-timestamp': String(Math.floor(now.getTime() / 1000)),
      [DELIVERY_ID_HEADER.toLowerCase()]: 'dlv_1',
    });
    const timestamp = String(hit!.headers['x-service-timestamp']);
    const signature = String(hit!.headers['x-service-signature']);
    expect(verifyWebhookSignature(secret, { rawBody: hit!.rawBody, timestamp, signature })).toEqual(
      { ok: true },
    );
    const independent = createHmac('sha256', secret)
      .update(Buffer.concat([Buffer.from(`${timestamp}.`), hit!.rawBody]))
      .digest('hex');
    expect(signature).toBe(`sha256=${independent}`);
    expect(JSON.parse(hit!.rawBody.toString())).toMatchObject({
      version: '1',
      data: { test: true, threatEventId: null },
    });
  });

  it('when the receiver redirects, then the redirect is not followed', async () => {
    expect(await postOnce(target('/status/302'), '{}', {})).toMatchObject({
      kind: 'response',
      status: 302,
    });
    expect(await postOnce(target('/status/301'), '{}', {})).toMatchObject({
      kind: 'response',
      status: 301,
    });
    expect(receiver.hitsOn('/landed')).toEqual([]);
  });

  it('when the host name resolves elsewhere, then the connection still goes to the checked address', async () => {
    const url = receiver.url('/pinned').replace('127.0.0.1', 'localhost');
    const pinnedElsewhere = { url: new URL(url), address: '127.0.0.2', family: 4 as const };
    expect(await postOnce(pinnedElsewhere, '{}', {})).toMatchObject({ kind: 'network-error' });
    expect(receiver.hitsOn('/pinned')).toEqual([]);
    const pinnedHere = { url: new URL(url), address: '127.0.0.1', family: 4 as const };
    expect(await postOnce(pinnedHere, '{}', {})).toMatchObject({ kind: 'response', status: 200 });
  });

  it('when the checked address changes after a delivery, then the next attempt never reuses the kept-alive connection', async () => {
    const url = new URL(receiver.url('/re-pointed').replace('127.0.0.1', 'localhost'));
    const before = { url, address: '127.0.0.1', family: 4 as const };
    expect(await postOnce(before, '{}', {})).toMatchObject({ kind: 'response', status: 200 });
    // Same origin, now checked at another address: the open connection to the first one is not it.
    const after = { url, address: '127.0.0.2', family: 4 as const };
    expect(await postOnce(after, '{}', {})).toMatchObject({ kind: 'network-error' });
    expect(receiver.hitsOn('/re-pointed')).toHaveLength(1);
  });

  it('when the receiver answers at length, then only the first 1 KB and the content type are kept', async () => {
    const result = await postOnce(target('/answer/5000'), '{}', {});
    expect(result).toMatchObject({
      kind: 'response',
      status: 200,
      answer: { contentType: 'text/plain; charset=utf-8', body: 'ok '.repeat(1024).slice(0, 1024) },
    });
  });

  it('when the receiver answers without end, then the attempt still ends after 1 KB', async () => {
    const result = await postOnce(target('/endless'), '{}', {});
    expect(result).toMatchObject({ kind: 'response', status: 200 });
    expect(result.kind === 'response' && result.answer?.body.length).toBe(1024);
  });

  it('when nothing listens, then it is a network error', async () => {
    const closed = {
      url: new URL(`https://127.0.0.1:${await freePort()}/x`),
      address: '127.0.0.1',
      family: 4 as const,
    };
    expect(await postOnce(closed, '{}', {})).toMatchObject({
      kind: 'network-error',
      message: expect.stringMatching(/ECONNREFUSED/),
    });
  });

  it('when the receiver hangs, then the attempt ends at its deadline', async () => {
    const started = Date.now();
    expect(await postOnce(target('/hang'), '{}', {}, 300)).toEqual({ kind: 'timeout' });
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});
