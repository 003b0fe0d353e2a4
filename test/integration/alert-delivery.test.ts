import request from 'supertest';
import { startAlert } from '../../src/alerts/alert-workflows';
import { slotId } from '../../src/alerts/channel-test-slots';
import { channelTestView, deliveryListView } from '../../src/alerts/channels.routes';
import { auditTrailView } from '../../src/evidence/trail/trail.routes';
import { freePort } from '../../tools/stack';
import { tripwirePayload } from '../support/alerts';
import { signUpAndLogIn, type SignedIn } from '../support/accounts';
import { startAlertStack } from '../support/alert-stack';
import type { Receiver } from '../support/receiver';
import { createTestApp, type TestApp } from '../support/test-app';

let t: TestApp;
let receiver: Receiver;
let stop: () => Promise<void>;

// Enough test slots for the 15 status classes at once: a busy machine must not turn one into a 429
// (the slot limit has its own tests below, with their own settings).
beforeAll(
  async () => ({ t, receiver, stop } = await startAlertStack({ CHANNEL_TEST_CONCURRENCY: '16' })),
);
afterAll(() => stop());

const SECRET = 'delivery-test-secret-123';
const as = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });

async function channel(who: SignedIn, url: string, kind = 'webhook') {
  const res = await request(t.app)
    .post('/api/alert-channels')
    .set(as(who))
    .send({ kind, name: url, url, ...(kind === 'webhook' && { secret: SECRET }) });
  if (res.status !== 201) throw new Error(`channel: ${res.status} ${res.text}`);
  return res.body.id as string;
}

const test = (who: SignedIn, id: string) =>
  request(t.app).post(`/api/alert-channels/${id}/test`).set(as(who));
/** Parsed with the documented schema, so a drifting schema fails here. */
const deliveries = async (who: SignedIn, id: string) =>
  deliveryListView.parse(
    (await request(t.app).get(`/api/alert-channels/${id}/deliveries`).set(as(who))).body,
  ).deliveries;

describe('channel test through the real workflow', () => {
  it('when the receiver answers 200, then one attempt, delivered, and the outcome is recorded everywhere', async () => {
    const who = await signUpAndLogIn(t.app);
    const id = await channel(who, receiver.url('/ok-200'));
    const res = await test(who, id);
    expect(res.status).toBe(200);
    expect(channelTestView.parse(res.body)).toMatchObject({
      channelId: id,
      outcome: 'delivered',
      status: 200,
    });
    expect(receiver.hitsOn('/ok-200')).toHaveLength(1);
    const [record] = await deliveries(who, id);
    expect(record).toMatchObject({
      outcome: 'delivered',
      attempts: [{ attempt: 1, status: 200, error: null }],
    });
    const stored = (await request(t.app).get(`/api/alert-channels/${id}`).set(as(who))).body;
    expect(stored).toMatchObject({ lastError: null, lastDeliveryAt: expect.any(String) });
    const trail = auditTrailView.parse(
      (await request(t.app).get('/api/audit/trail').set(as(who))).body,
    ).entries;
    expect(trail[0]).toMatchObject({
      action: 'delivery.outcome',
      outcome: 'delivered',
      channel_id: id,
    });
  });

  it('when receivers answer each class of status, then attempts follow the spec', async () => {
    const who = await signUpAndLogIn(t.app);
    const cases: [string, number][] = [
      ['/status/301', 1],
      ['/status/302', 1],
      ['/status/400', 1],
      ['/status/401', 1],
      ['/status/403', 1],
      ['/status/404', 1],
      ['/status/410', 1],
      ['/status/422', 1],
      ['/status/408', 3],
      ['/status/409', 3],
      ['/status/425', 3],
      ['/status/429', 3],
      ['/status/500', 3],
      ['/status/502', 3],
      ['/status/503', 3],
    ];
    const ids = await Promise.all(cases.map(([path]) => channel(who, receiver.url(path))));
    const results = await Promise.all(ids.map((id) => test(who, id)));
    for (const [i, [path, attempts]] of cases.entries()) {
      expect([path, results[i]!.body.outcome]).toEqual([path, 'failed']);
      expect([path, receiver.hitsOn(path).length]).toEqual([path, attempts]);
      const [record] = await deliveries(who, ids[i]!);
      expect(record!.attempts).toHaveLength(attempts);
      const stored = (await request(t.app).get(`/api/alert-channels/${ids[i]}`).set(as(who))).body;
      expect(stored.lastError).toMatchObject({
        status: Number(path.slice(-3)),
        message: `HTTP ${path.slice(-3)}`,
      });
    }
    expect(receiver.hitsOn('/landed')).toEqual([]);
  });

  it('when retried, then the pause between attempts grows', async () => {
    const who = await signUpAndLogIn(t.app);
    const id = await channel(who, receiver.url('/status/503?backoff'));
    await test(who, id);
    const times = receiver.hitsOn('/status/503?backoff').map((h) => h.at);
    expect(times).toHaveLength(3);
    expect(times[2]! - times[1]!).toBeGreaterThan(times[1]! - times[0]!);
  });

  it('when nothing listens, then three attempts and the network error is kept', async () => {
    const who = await signUpAndLogIn(t.app);
    const id = await channel(who, `https://127.0.0.1:${await freePort()}/refused`);
    // No answer, so no status: null, as the documented schema allows.
    expect(channelTestView.parse((await test(who, id)).body)).toMatchObject({
      outcome: 'failed',
      status: null,
      error: expect.stringMatching(/ECONNREFUSED/),
    });
    expect((await deliveries(who, id))[0]!.attempts).toHaveLength(3);
  });

  it('when the channel is disabled, then it is skipped and receives nothing', async () => {
    const who = await signUpAndLogIn(t.app);
    const id = await channel(who, receiver.url('/disabled'));
    await request(t.app).patch(`/api/alert-channels/${id}`).set(as(who)).send({ disabled: true });
    expect((await test(who, id)).body).toMatchObject({
      outcome: 'skipped',
      error: 'channel disabled',
    });
    expect(receiver.hitsOn('/disabled')).toEqual([]);
  });

  it('when the receiver hangs past the deadline, then the attempt times out and is retried', async () => {
    const who = await signUpAndLogIn(t.app);
    const id = await channel(who, receiver.url('/hang'));
    const res = await test(who, id);
    expect(res.body).toMatchObject({
      outcome: 'failed',
      error: expect.stringMatching(/no answer within/),
    });
    expect(receiver.hitsOn('/hang')).toHaveLength(3);
  }, 60_000);
});

describe('real alerts', () => {
  it('when an alert starts twice for one event, then each channel gets it once and built-ins are skipped', async () => {
    const who = await signUpAndLogIn(t.app);
    const slack = await channel(who, receiver.url('/slack'), 'slack');
    const hook = await channel(who, receiver.url('/hook'));
    const payload = tripwirePayload(`thr_${who.userId}`);
    const input = { accountId: who.userId, payload, threatEventId: `thr_${who.userId}` };
    const first = await startAlert(t.temporal, input);
    const second = await startAlert(t.temporal, input);
    expect(second.workflowId).toBe(first.workflowId);
    const { results } = await first.result();
    expect(results.map((r) => [r.kind, r.outcome]).sort()).toEqual([
      ['chat', 'skipped'],
      ['email', 'skipped'],
      ['slack', 'delivered'],
      ['webhook', 'delivered'],
    ]);
    expect(receiver.hitsOn('/slack')).toHaveLength(1);
    expect(receiver.hitsOn('/hook')).toHaveLength(1);
    expect(slack).not.toBe(hook);
  });
});

describe('channel test concurrency per account, shared through MongoDB', () => {
  /** A second API "replica" on the same database and task queue, allowing `slots` tests at a time. */
  async function replicaWithOneSlot(slots = 1) {
    const config = { ...t.config, CHANNEL_TEST_CONCURRENCY: slots };
    const replica = await createTestApp({ config });
    return {
      app: replica.app,
      stop: () => replica.disconnect(),
    };
  }
  const slots = () => t.mongo.db.collection<{ _id: string }>('channel_test_slots');

  it('when the only slot is busy past 10 s, then the waiting tests get 429 and their receivers see nothing', async () => {
    const replica = await replicaWithOneSlot();
    const who = await signUpAndLogIn(t.app);
    const ids = await Promise.all(
      ['/waiting-1', '/waiting-2'].map((p) => channel(who, receiver.url(p))),
    );
    // Another replica's test holds the slot.
    await slots().insertOne({
      _id: slotId(who.userId, 0),
      holder: 'other-replica',
      expiresAt: new Date(Date.now() + 60_000),
    } as never);
    try {
      const started = Date.now();
      const answers = await Promise.all(
        ids.map((id) => request(replica.app).post(`/api/alert-channels/${id}/test`).set(as(who))),
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
      for (const res of answers) {
        expect(res.status).toBe(429);
        expect(res.headers['retry-after']).toBe('60');
        expect(res.body.detail).toMatch(/nothing was sent/);
      }
      expect(receiver.hitsOn('/waiting-1')).toEqual([]);
      expect(receiver.hitsOn('/waiting-2')).toEqual([]);
    } finally {
      await slots().deleteOne({ _id: slotId(who.userId, 0) });
      await replica.stop();
    }
  }, 30_000);

  it('when the slot comes free while a test waits, then the test runs', async () => {
    const replica = await replicaWithOneSlot();
    const who = await signUpAndLogIn(t.app);
    const id = await channel(who, receiver.url('/after-wait'));
    await slots().insertOne({
      _id: slotId(who.userId, 0),
      holder: 'other-replica',
      expiresAt: new Date(Date.now() + 60_000),
    } as never);
    setTimeout(() => void slots().deleteOne({ _id: slotId(who.userId, 0) }), 1_000);
    try {
      const res = await request(replica.app).post(`/api/alert-channels/${id}/test`).set(as(who));
      expect(res.body).toMatchObject({ outcome: 'delivered' });
      expect(receiver.hitsOn('/after-wait')).toHaveLength(1);
    } finally {
      await replica.stop();
    }
  });

  it('when the process holding the slot died, then its lease runs out within the wait and the test runs', async () => {
    const replica = await replicaWithOneSlot();
    const who = await signUpAndLogIn(t.app);
    const id = await channel(who, receiver.url('/after-crash'));
    // A lease its holder renewed just now and will never renew again (the lease is 6 s).
    await slots().insertOne({
      _id: slotId(who.userId, 0),
      holder: 'dead-replica',
      expiresAt: new Date(Date.now() + 6_000),
    } as never);
    try {
      const res = await request(replica.app).post(`/api/alert-channels/${id}/test`).set(as(who));
      expect(res.body).toMatchObject({ outcome: 'delivered' });
      expect(receiver.hitsOn('/after-crash')).toHaveLength(1);
    } finally {
      await replica.stop();
    }
  }, 30_000);

  it("when one account already runs 4 tests, then its 5th gets 429 while another account's test runs at once", async () => {
    const replica = await replicaWithOneSlot(4);
    const [busy, other] = await Promise.all([signUpAndLogIn(t.app), signUpAndLogIn(t.app)]);
    const fifth = await channel(busy, receiver.url('/fifth'));
    const fair = await channel(other, receiver.url('/other-tenant'));
    // The busy account's four tests run on other replicas (held, renewed leases).
    const held = [0, 1, 2, 3].map((n) => slotId(busy.userId, n));
    await slots().insertMany(
      held.map((_id) => ({
        _id,
        holder: 'other-replica',
        expiresAt: new Date(Date.now() + 60_000),
      })),
    );
    try {
      const refused = request(replica.app).post(`/api/alert-channels/${fifth}/test`).set(as(busy));
      const served = await request(replica.app)
        .post(`/api/alert-channels/${fair}/test`)
        .set(as(other));
      expect(served.body).toMatchObject({ outcome: 'delivered' });
      expect(receiver.hitsOn('/other-tenant')).toHaveLength(1);
      const res = await refused;
      expect([res.status, res.body.detail]).toEqual([429, expect.stringMatching(/this account/)]);
      expect(receiver.hitsOn('/fifth')).toEqual([]);
    } finally {
      await slots().deleteMany({ _id: { $in: held } });
      await replica.stop();
    }
  }, 30_000);
});
