import request from 'supertest';
import { signUpAndLogIn } from '../support/accounts';
import { createTestApp, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';

let t: TestApp;
let worker: { stop(): Promise<void> };

beforeAll(async () => {
  t = await createTestApp();
  worker = await startTestWorker(t.mongo.db, t.config.TEMPORAL_TASK_QUEUE);
});
afterAll(async () => {
  await worker.stop();
  await t.close();
});

describe('API → workflow → activity → MongoDB', () => {
  it('when a signed-in user pings the workers, then an activity records it in MongoDB', async () => {
    const { token, userId } = await signUpAndLogIn(t.app);
    const res = await request(t.app)
      .post('/api/diagnostics/worker-ping')
      .set('Authorization', `Bearer ${token}`)
      .set('X-Request-ID', 'ping-request-1');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      workflow_id: expect.stringMatching(/^worker-ping-/),
      ping_id: res.body.workflow_id,
      recorded_at: expect.any(String),
      activity_attempt: 1,
      round_trip_ms: expect.any(Number),
    });

    const stored = await t.mongo.db.collection('worker_pings').findOne({ _id: res.body.ping_id });
    expect(stored).toMatchObject({ accountId: userId, requestId: 'ping-request-1', attempt: 1 });

    const description = await t.temporal.client.workflow.getHandle(res.body.workflow_id).describe();
    expect(description.status.name).toBe('COMPLETED');
    expect(description.taskQueue).toBe(t.config.TEMPORAL_TASK_QUEUE);
    expect(description.memo).toEqual({ accountId: userId, requestId: 'ping-request-1' });
    expect(description.typedSearchAttributes.get({ name: 'AccountId', type: 'KEYWORD' })).toBe(
      userId,
    );
  });

  it('when the caller has no session, then 401 and no workflow starts', async () => {
    const pings = t.mongo.db.collection('worker_pings');
    const before = await pings.countDocuments();
    const res = await request(t.app).post('/api/diagnostics/worker-ping');
    expect(res.status).toBe(401);
    expect(await pings.countDocuments()).toBe(before);
  });
});
