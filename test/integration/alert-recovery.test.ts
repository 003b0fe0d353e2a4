import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import request from 'supertest';
import { startAlert } from '../../src/alerts/alert-workflows';
import { deliveryListView } from '../../src/alerts/channels.routes';
import { auditTrailView } from '../../src/evidence/trail/trail.routes';
import { ALERT_NOT_DELIVERED } from '../../workflows/shared';
import { tripwirePayload } from '../support/alerts';
import { signUpAndLogIn, type SignedIn } from '../support/accounts';
import { startAlertStack } from '../support/alert-stack';
import type { Receiver } from '../support/receiver';
import type { TestApp } from '../support/test-app';

let t: TestApp;
let receiver: Receiver;
let stop: () => Promise<void>;

// One recovery round 2 s after the first delivery failed, a second 2 s after that.
beforeAll(
  async () => ({ t, receiver, stop } = await startAlertStack({ ALERT_RECOVERY_SCHEDULE: '2s,2s' })),
);
afterAll(() => stop());

const as = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });

async function webhook(who: SignedIn, path: string) {
  const res = await request(t.app)
    .post('/api/alert-channels')
    .set(as(who))
    .send({ kind: 'webhook', name: path, url: receiver.url(path), secret: 'recovery-secret-123' });
  if (res.status !== 201) throw new Error(`channel: ${res.status} ${res.text}`);
  return res.body.id as string;
}

async function alert(who: SignedIn) {
  const threatEventId = `thr_${randomUUID()}`;
  return startAlert(t.temporal, {
    accountId: who.userId,
    payload: tripwirePayload(threatEventId),
    threatEventId,
  });
}

const deliveries = async (who: SignedIn, id: string) =>
  deliveryListView.parse(
    (await request(t.app).get(`/api/alert-channels/${id}/deliveries`).set(as(who))).body,
  ).deliveries;

const outcomesInTrail = async (who: SignedIn, channelId: string) =>
  auditTrailView
    .parse((await request(t.app).get('/api/audit/trail').set(as(who))).body)
    .entries.flatMap((e) =>
      e.action === 'delivery.outcome' && e.channel_id === channelId ? [e.outcome] : [],
    )
    .reverse();

describe('automatic recovery of a failed delivery', () => {
  it('when the receiver is down and then up, then the alert runs on and is delivered under the same delivery id', async () => {
    const who = await signUpAndLogIn(t.app);
    const path = '/recovering';
    const id = await webhook(who, path);
    receiver.breakWith(503);
    const handle = await alert(who);
    await receiver.waitFor(path, 3);
    // The first delivery failed (3 attempts): the channel says so, the alert is still running.
    for (let i = 0; i < 50 && (await outcomesInTrail(who, id)).length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await outcomesInTrail(who, id)).toEqual(['failed']);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    receiver.breakWith(null);

    const { results } = await handle.result();
    expect(results.find((r) => r.channelId === id)).toMatchObject({ outcome: 'delivered' });
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    const hits = receiver.hitsOn(path);
    expect(hits).toHaveLength(4);
    expect(new Set(hits.map((h) => h.headers['x-service-delivery'])).size).toBe(1);
    const [record] = await deliveries(who, id);
    expect(record).toMatchObject({ outcome: 'delivered', status: 200 });
    expect(record!.attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4]);
    expect(await outcomesInTrail(who, id)).toEqual(['failed', 'delivered']);
  });

  it('when no channel is ever reached, then the alert ends as a failed workflow naming the error', async () => {
    const who = await signUpAndLogIn(t.app);
    const path = '/status/500';
    const id = await webhook(who, path);
    const handle = await alert(who);
    const failure = await handle.result().then(
      () => null,
      (err: unknown) => err,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause as Error & { type?: string };
    expect(cause.type).toBe(ALERT_NOT_DELIVERED);
    expect(cause.message).toContain(`webhook ${id}: HTTP 500`);
    expect((await handle.describe()).status.name).toBe('FAILED');
    expect(receiver.hitsOn(path)).toHaveLength(9);
    expect(await outcomesInTrail(who, id)).toEqual(['failed', 'failed', 'failed']);
  });

  it('when the channel is disabled while it recovers, then recovery stops', async () => {
    const who = await signUpAndLogIn(t.app);
    const path = '/status/502';
    const id = await webhook(who, path);
    const handle = await alert(who);
    await receiver.waitFor(path, 3);
    const res = await request(t.app)
      .patch(`/api/alert-channels/${id}`)
      .set(as(who))
      .send({ disabled: true });
    expect(res.status).toBe(200);
    await expect(handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    expect(receiver.hitsOn(path)).toHaveLength(3);
  });
});
