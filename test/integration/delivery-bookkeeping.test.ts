import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import request from 'supertest';
import type { Collection, Db } from 'mongodb';
import { startThreatAlert } from '../../src/alerts/alert-workflows';
import { deliveryListView } from '../../src/alerts/channels.routes';
import { THREAT_EVENT_REMOVED } from '../../workflows/shared';
import { signUpAndLogIn } from '../support/accounts';
import { Receiver } from '../support/receiver';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';

// Issue 15, point 3: a delivery the receiver accepted is never recorded as failed. The worker runs
// the real activities, but its writes of delivery outcomes fail at first, as when the database is
// briefly unreachable right after the receiver answered.
let t: TestApp;
let receiver: Receiver;
let worker: { stop(): Promise<void> };
/**
 * How many more outcome writes of the accepted attempt fail before the database "comes back". The
 * first is the first step's own record, the next the record the workflow retries until it lands.
 */
let failingWrites = 0;
const failedWrites: string[] = [];

/** The worker's database, whose delivery records' writes fail while `failingWrites` is above 0. */
function failingDeliveries(db: Db): Db {
  const failing = (collection: Collection): Collection =>
    new Proxy(collection, {
      get(target, key) {
        if (key === 'bulkWrite') {
          return async (...args: Parameters<Collection['bulkWrite']>) => {
            if (failingWrites > 0) {
              failingWrites--;
              failedWrites.push(
                ...args[0].flatMap((op) =>
                  'updateOne' in op ? [op.updateOne.filter._id as unknown as string] : [],
                ),
              );
              throw new Error('connection to the database lost (injected)');
            }
            return target.bulkWrite(...args);
          };
        }
        return bound(target, key);
      },
    });
  return new Proxy(db, {
    get(target, key) {
      if (key === 'collection') {
        return (name: string) =>
          name === 'alert_deliveries' ? failing(target.collection(name)) : target.collection(name);
      }
      return bound(target, key);
    },
  });
}

/** A property of `target`, its methods bound to it (so the driver's own fields stay reachable). */
function bound(target: object, key: string | symbol): unknown {
  const value: unknown = Reflect.get(target, key, target);
  return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
}

beforeAll(async () => {
  t = await createTestApp({ config: testConfig({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' }) });
  receiver = await Receiver.start();
  worker = await startTestWorker(failingDeliveries(t.mongo.db), t.config.TEMPORAL_TASK_QUEUE);
});
afterAll(async () => {
  await worker.stop();
  await receiver.stop();
  await t.close();
});

it('when the accepted attempt fails to be recorded after the receiver accepted, then the outcome is still delivered and the receiver got one delivery', async () => {
  const who = await signUpAndLogIn(t.app);
  const auth = { Authorization: `Bearer ${who.token}` };
  const created = await request(t.app)
    .post('/api/alert-channels')
    .set(auth)
    .send({ kind: 'webhook', name: 'ops', url: receiver.url('/accepted'), secret: 'x'.repeat(20) });
  failingWrites = 2;

  const res = await request(t.app).post(`/api/alert-channels/${created.body.id}/test`).set(auth);

  expect(res.body).toMatchObject({ outcome: 'delivered', status: 200 });
  expect(failedWrites).toHaveLength(2);
  const hits = receiver.hitsOn('/accepted');
  expect(hits).toHaveLength(1);
  expect(hits[0]!.headers['x-service-delivery']).toBe(res.body.deliveryId);
  const { deliveries } = deliveryListView.parse(
    (await request(t.app).get(`/api/alert-channels/${created.body.id}/deliveries`).set(auth)).body,
  );
  expect(deliveries).toHaveLength(1);
  expect(deliveries[0]).toMatchObject({
    deliveryId: res.body.deliveryId,
    outcome: 'delivered',
    attempts: [{ attempt: 1, status: 200, error: null }],
  });
  const channel = (await request(t.app).get(`/api/alert-channels/${created.body.id}`).set(auth))
    .body;
  expect(channel.lastError).toBeNull();
});

it('when a threat event is removed before its alert is prepared, then the alert ends at once as removed rather than retrying forever', async () => {
  const who = await signUpAndLogIn(t.app);
  const threatEventId = `thr_removed_${Date.now()}`;

  await startThreatAlert(t.temporal, {
    accountId: who.userId,
    threatEventId,
  });
  const outcome = await t.temporal.client.workflow
    .getHandle(`alert-${threatEventId}`)
    .result()
    .then(
      () => 'completed',
      (err: unknown) => err,
    );

  expect(outcome).toBeInstanceOf(WorkflowFailedError);
  // The activity's failure, however the SDK wraps it (a local activity's arrives unwrapped).
  let failure = (outcome as WorkflowFailedError).cause;
  while (failure && !(failure instanceof ApplicationFailure)) failure = failure.cause as never;
  expect(failure).toMatchObject({ type: THREAT_EVENT_REMOVED, nonRetryable: true });
});
