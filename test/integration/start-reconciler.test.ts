/**
 * The outbox for workflow starts: an app whose Temporal address answers nothing records threat
 * events and agents with a pending mark; a second app on the same database and the real Temporal
 * starts what is missing with one reconciler pass, and a second pass or a repeated start sends
 * nothing twice.
 */
import request from 'supertest';
import { freePort } from '../../tools/stack';
import { followUpIdOf } from '../../workflows/shared';
import { createKey, signUpAndLogIn } from '../support/accounts';
import { Receiver } from '../support/receiver';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';

let down: TestApp;
let up: TestApp;
let receiver: Receiver;
let worker: { stop(): Promise<void> };
/** The reconciling app's clock runs a minute ahead, so the grace period of fresh starts is over. */
const AHEAD_MS = 60_000;

beforeAll(async () => {
  const config = testConfig({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', ALERT_GATHER_MS: '200' });
  down = await createTestApp({
    config: { ...config, TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` },
  });
  up = await createTestApp({ config, clock: () => new Date(Date.now() + AHEAD_MS) });
  worker = await startTestWorker(up.mongo.db, config.TEMPORAL_TASK_QUEUE);
  receiver = await Receiver.start();
});
afterAll(async () => {
  await worker.stop();
  await receiver.stop();
  await down.disconnect();
  await up.close();
});

async function account(app: TestApp['app']) {
  const who = await signUpAndLogIn(app);
  const path = `/alerts/${who.userId}`;
  await request(app)
    .post('/api/alert-channels')
    .set({ Authorization: `Bearer ${who.token}` })
    .send({ kind: 'slack', name: 'ops', url: receiver.url(path) })
    .expect(201);
  return { who, path };
}

/** A URL canary planted through the app whose Temporal is down: the path that fires it. */
async function plantUrl(token: string) {
  const planted = await request(down.app)
    .post('/api/canaries')
    .set({ Authorization: `Bearer ${token}` })
    .send({ kind: 'url', memo: 'wiki page' })
    .expect(201);
  const { value, canary_id: canaryId } = planted.body as { value: string; canary_id: string };
  return { token: new URL(value).pathname, canaryId };
}

const pendingAlerts = () =>
  up.mongo.db.collection('threat_events').countDocuments({ alertPendingSince: { $exists: true } });

describe('start reconciler', () => {
  it('when Temporal was down as a tripwire fired, then the reconciler starts its alert once, delivered once', async () => {
    const { who, path } = await account(down.app);
    const { token } = await plantUrl(who.token);
    await request(down.app).get(token).set('user-agent', 'curl/8').expect(200);
    await down.tripwires.flush();
    const [event] = await up.mongo.db.collection('threat_events').find().toArray();
    expect(event).toMatchObject({ hitCount: 1, alert: null });
    expect(await pendingAlerts()).toBe(1);

    expect(await up.reconciler.reconcileOnce()).toEqual({
      alerts: 1,
      followUps: 0,
      watches: 0,
      schedules: 0,
    });
    const workflowId = `alert-${String(event!._id)}`;
    await up.temporal.client.workflow.getHandle(workflowId).result();
    expect(receiver.hitsOn(path)).toHaveLength(1);
    expect(await pendingAlerts()).toBe(0);

    // A start that comes again (another replica's pass, a retried request) delivers nothing.
    await up.mongo.db
      .collection('threat_events')
      .updateOne({ _id: event!._id }, { $set: { alertPendingSince: new Date(0) } });
    expect(await up.reconciler.reconcileOnce()).toEqual({
      alerts: 1,
      followUps: 0,
      watches: 0,
      schedules: 0,
    });
    expect(await up.reconciler.reconcileOnce()).toEqual({
      alerts: 0,
      followUps: 0,
      watches: 0,
      schedules: 0,
    });
    const deliveries = await up.mongo.db
      .collection('alert_deliveries')
      .countDocuments({ workflowId, outcome: 'delivered' });
    expect({ deliveries, received: receiver.hitsOn(path).length }).toEqual({
      deliveries: 1,
      received: 1,
    });
  });

  it("when Temporal was down as a storm's later hit came, then the reconciler starts its alert and its follow-up once", async () => {
    const { who, path } = await account(down.app);
    const { token, canaryId } = await plantUrl(who.token);
    for (let i = 0; i < 2; i++) {
      await request(down.app).get(token).set('user-agent', 'curl/8').expect(200);
      await down.tripwires.flush();
    }
    const [event] = await up.mongo.db.collection('threat_events').find({ canaryId }).toArray();
    expect(event).toMatchObject({ hitCount: 2, followUpPendingSince: expect.any(Date) });

    expect(await up.reconciler.reconcileOnce()).toEqual({
      alerts: 1,
      followUps: 1,
      watches: 0,
      schedules: 0,
    });
    const threatEventId = String(event!._id);
    await up.temporal.client.workflow.getHandle(`alert-${threatEventId}`).result();
    // The alert, started after both hits, reported both: its follow-up ran and had nothing to add.
    const followUp = await up.temporal.client.workflow
      .getHandle(followUpIdOf(threatEventId))
      .result();
    expect(followUp).toEqual({ results: [] });
    expect(receiver.hitsOn(path)).toHaveLength(1);
    expect(receiver.hitsOn(path)[0]!.rawBody.toString()).toContain('2 times');

    // Started again (another replica's pass): nothing more is sent.
    await up.mongo.db
      .collection('threat_events')
      .updateOne({ _id: event!._id }, { $set: { followUpPendingSince: new Date(0) } });
    expect(await up.reconciler.reconcileOnce()).toMatchObject({ alerts: 0, followUps: 1 });
    expect(await up.reconciler.reconcileOnce()).toMatchObject({ alerts: 0, followUps: 0 });
    expect(receiver.hitsOn(path)).toHaveLength(1);
    expect(
      await up.mongo.db
        .collection('threat_events')
        .countDocuments({ _id: event!._id, followUpPendingSince: { $exists: true } }),
    ).toBe(0);
  });

  it('when Temporal was down as an agent registered, then the agent is kept and its watch starts on the next pass', async () => {
    const { who } = await account(down.app);
    const { key } = await createKey(down.app, who.token, {
      scopes: ['agent:read', 'agent:write'],
    });
    const res = await request(down.app)
      .post('/agent/agents')
      .set('X-API-Key', key)
      .send({ name: 'support-bot', heartbeat_interval_seconds: 3600 })
      .expect(201);
    const agentId = (res.body as { agent_id: string }).agent_id;
    await request(up.app)
      .post(`/agent/agents/${agentId}/heartbeat`)
      .set('X-API-Key', key)
      .expect(404);

    expect(await up.reconciler.reconcileOnce()).toEqual({
      alerts: 0,
      followUps: 0,
      watches: 1,
      schedules: 0,
    });
    await request(up.app)
      .post(`/agent/agents/${agentId}/heartbeat`)
      .set('X-API-Key', key)
      .expect(202);
    expect(await up.reconciler.reconcileOnce()).toEqual({
      alerts: 0,
      followUps: 0,
      watches: 0,
      schedules: 0,
    });
    await request(up.app).delete(`/agent/agents/${agentId}`).set('X-API-Key', key).expect(204);
  });
});
