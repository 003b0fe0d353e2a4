import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { rotatedView } from '../../src/alerts/channels.routes';
import { verifyWebhookSignature } from '../../src/alerts/webhook-signature';
import { signUpAndLogIn, type SignedIn } from '../support/accounts';
import { startAlertStack } from '../support/alert-stack';
import type { Hit, Receiver } from '../support/receiver';
import type { TestApp } from '../support/test-app';

let t: TestApp;
let receiver: Receiver;
let stop: () => Promise<void>;
beforeAll(async () => ({ t, receiver, stop } = await startAlertStack()));
afterAll(() => stop());

const OLD = 'rotation-old-secret-1';
const NEW = 'rotation-new-secret-2';
const as = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });

async function webhook(who: SignedIn, path: string, kind = 'webhook') {
  const res = await request(t.app)
    .post('/api/alert-channels')
    .set(as(who))
    .send({
      kind,
      name: path,
      url: receiver.url(path),
      ...(kind === 'webhook' && { secret: OLD }),
    });
  if (res.status !== 201) throw new Error(`channel: ${res.status} ${res.text}`);
  return res.body.id as string;
}

const rotate = (who: SignedIn, id: string, body: object) =>
  request(t.app).post(`/api/alert-channels/${id}/rotate-secret`).set(as(who)).send(body);

/** A channel test, and the request its receiver got. */
async function delivered(who: SignedIn, id: string, path: string): Promise<Hit> {
  const res = await request(t.app).post(`/api/alert-channels/${id}/test`).set(as(who));
  expect(res.body).toMatchObject({ outcome: 'delivered' });
  return receiver.hitsOn(path).at(-1)!;
}

/** What a receiver holding `secret` concludes, through each header set. */
function verifies(secret: string, hit: Hit) {
  const spec = verifyWebhookSignature(secret, {
    rawBody: hit.rawBody,
    timestamp: hit.headers['x-service-timestamp'] as string,
    signature: hit.headers['x-service-signature'] as string,
  }).ok;
  let standard = true;
  try {
    // The Standard Webhooks library, as a receiver in any language would use it.
    new Webhook(`whsec_${Buffer.from(secret).toString('base64')}`).verify(
      hit.rawBody.toString(),
      Object.fromEntries(Object.entries(hit.headers).map(([k, v]) => [k, String(v)])),
    );
  } catch {
    standard = false;
  }
  return { spec, standard };
}

describe('secret rotation with overlap', () => {
  it('when a secret is rotated, then during the overlap a receiver with either secret verifies, and after it only the new one', async () => {
    const who = await signUpAndLogIn(t.app);
    const path = '/rotation';
    const id = await webhook(who, path);

    const res = await rotate(who, id, { secret: NEW });
    expect(res.status).toBe(200);
    const view = rotatedView.parse(res.body);
    expect(view.secret).toBeUndefined();
    expect(JSON.stringify(res.body)).not.toContain(NEW);
    const hours = (Date.parse(view.previousSecretValidUntil) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(23.9);
    expect(hours).toBeLessThanOrEqual(24);

    const during = await delivered(who, id, path);
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    // The spec's header holds one signature: the old secret's, until the overlap ends.
    expect(verifies(OLD, during)).toEqual({ spec: true, standard: true });
    expect(verifies(NEW, during)).toEqual({ spec: false, standard: true });

    // No overlap: the secret just replaced is not signed for at all.
    const again = await rotate(who, id, { secret: OLD.replace('old', 'third'), overlapHours: 0 });
    expect(again.status).toBe(200);
    const after = await delivered(who, id, path);
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(verifies(NEW, after)).toEqual({ spec: false, standard: false });
    expect(verifies(OLD.replace('old', 'third'), after)).toEqual({ spec: true, standard: true });

    // A secret set outright by PATCH ends any overlap at once.
    await rotate(who, id, { secret: NEW });
    const patched = await request(t.app)
      .patch(`/api/alert-channels/${id}`)
      .set(as(who))
      .send({ secret: OLD });
    expect(patched.status).toBe(200);
    const set = await delivered(who, id, path);
    expect(verifies(OLD, set)).toEqual({ spec: true, standard: true });
    expect(verifies(NEW, set)).toEqual({ spec: false, standard: false });
  });

  it('when no secret is given, then one is made, shown once, and deliveries are signed with it', async () => {
    const who = await signUpAndLogIn(t.app);
    const path = '/rotation-made';
    const id = await webhook(who, path);
    const res = await rotate(who, id, { overlapHours: 0 });
    expect(res.status).toBe(200);
    const { secret } = rotatedView.parse(res.body);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(verifies(secret!, await delivered(who, id, path))).toEqual({
      spec: true,
      standard: true,
    });
  });

  it('when the request is wrong, then a 4xx names the problem and the secret is unchanged', async () => {
    const who = await signUpAndLogIn(t.app);
    const path = '/rotation-refused';
    const id = await webhook(who, path);
    const short = await rotate(who, id, { secret: 'short' });
    expect(short.status).toBe(422);
    expect(short.body.detail).toMatch(/secret: at least 16 characters/);
    const long = await rotate(who, id, { secret: NEW, overlapHours: 169 });
    expect(long.status).toBe(422);
    expect(long.body.detail).toMatch(/overlapHours/);
    const slack = await webhook(who, '/rotation-slack', 'slack');
    const notSigned = await rotate(who, slack, { secret: NEW });
    expect(notSigned.status).toBe(422);
    expect(notSigned.body.detail).toBe('only generic webhook channels sign with a secret');
    const stranger = await signUpAndLogIn(t.app);
    expect((await rotate(stranger, id, { secret: NEW })).status).toBe(403);
    expect(verifies(OLD, await delivered(who, id, path))).toEqual({ spec: true, standard: true });
  });
});
