import request from 'supertest';
import { createKey, signUpAndLogIn, type SignedIn } from '../support/accounts';
import { createTestApp, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';

let t: TestApp;
let worker: { stop(): Promise<void> };
let alice: SignedIn;
let bob: SignedIn;
const alicePings: string[] = [];
let bobPing: string;

const ping = async (who: SignedIn): Promise<string> => {
  const res = await request(t.app)
    .post('/api/diagnostics/worker-ping')
    .set('Authorization', `Bearer ${who.token}`);
  if (res.status !== 200) throw new Error(`worker-ping: ${res.status} ${res.text}`);
  return res.body.workflow_id as string;
};

const list = (who: SignedIn, query = '') =>
  request(t.app).get(`/api/workflow-runs${query}`).set('Authorization', `Bearer ${who.token}`);

/** Visibility is eventually consistent: waits until the account's closed runs are all listed. */
async function listedClosed(who: SignedIn, count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await list(who, '?status=completed');
    if (res.status === 200 && res.body.workflow_runs.length >= count) return;
    if (Date.now() > deadline) throw new Error(`visibility lists ${res.text}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

beforeAll(async () => {
  t = await createTestApp();
  worker = await startTestWorker(t.mongo.db, t.config.TEMPORAL_TASK_QUEUE);
  [alice, bob] = await Promise.all([signUpAndLogIn(t.app), signUpAndLogIn(t.app)]);
  for (let i = 0; i < 3; i++) alicePings.push(await ping(alice));
  bobPing = await ping(bob);
  await Promise.all([listedClosed(alice, 3), listedClosed(bob, 1)]);
}, 120_000);
afterAll(async () => {
  await worker.stop();
  await t.close();
});

describe('GET /api/workflow-runs', () => {
  it("lists the caller's own runs with status and times, never another tenant's", async () => {
    const res = await list(alice);
    expect(res.status).toBe(200);
    const ids = res.body.workflow_runs.map((r: { workflow_id: string }) => r.workflow_id);
    expect(ids.sort()).toEqual([...alicePings].sort());
    expect(ids).not.toContain(bobPing);
    expect(res.body.workflow_runs[0]).toEqual({
      workflow_id: expect.stringMatching(/^worker-ping-/),
      run_id: expect.any(String),
      workflow_type: 'workerPingWorkflow',
      status: 'completed',
      outcome: null,
      event: null,
      canary_id: null,
      started_at: expect.any(String),
      closed_at: expect.any(String),
    });
    expect(res.body.next_cursor).toBeNull();
  });

  it('pages with limit and next_cursor, each run once', async () => {
    const first = await list(alice, '?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.workflow_runs).toHaveLength(2);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await list(alice, `?limit=2&cursor=${first.body.next_cursor as string}`);
    expect(second.status).toBe(200);
    const seen = [...first.body.workflow_runs, ...second.body.workflow_runs].map(
      (r: { workflow_id: string }) => r.workflow_id,
    );
    expect(seen.sort()).toEqual([...alicePings].sort());
  });

  it('filters by status, event and start time', async () => {
    expect((await list(alice, '?status=running')).body.workflow_runs).toEqual([]);
    expect((await list(alice, '?event=canary.tripwire_triggered')).body.workflow_runs).toEqual([]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await list(alice, `?since=${future}`)).body.workflow_runs).toEqual([]);
    const past = new Date(Date.now() - 3_600_000).toISOString();
    expect((await list(alice, `?since=${past}`)).body.workflow_runs).toHaveLength(3);
  });

  it('refuses a filter that would leave its quotes, and a cursor it did not give', async () => {
    const injected = await list(alice, `?canary_id=${encodeURIComponent("x' OR AccountId != 'x")}`);
    expect(injected.status).toBe(422);
    expect(JSON.stringify(injected.body.detail)).toContain('canary_id');
    const forged = await list(alice, '?cursor=not-a-cursor');
    expect(forged.status).toBe(422);
  });

  it('answers an API key with threats:read, and refuses one without it', async () => {
    const reader = await createKey(t.app, alice.token, { scopes: ['threats:read'] });
    const ok = await request(t.app).get('/api/workflow-runs').set('X-API-Key', reader.key);
    expect(ok.status).toBe(200);
    expect(ok.body.workflow_runs).toHaveLength(3);
    const other = await createKey(t.app, alice.token, { scopes: ['canaries:read'] });
    const refused = await request(t.app).get('/api/workflow-runs').set('X-API-Key', other.key);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      detail: 'The API key does not have the required scope: threats:read',
    });
  });

  it('refuses a caller without credentials', async () => {
    expect((await request(t.app).get('/api/workflow-runs')).status).toBe(401);
  });
});

describe('GET /api/workflow-runs/{workflow_id}', () => {
  it("tells one run's story from its history", async () => {
    const res = await request(t.app)
      .get(`/api/workflow-runs/${alicePings[0]!}`)
      .set('Authorization', `Bearer ${alice.token}`);
    expect(res.status).toBe(200);
    expect(res.body.workflow_run).toMatchObject({
      workflow_id: alicePings[0],
      status: 'completed',
    });
    const types = res.body.steps.map((s: { type: string }) => s.type);
    expect(types[0]).toBe('workflow_execution_started');
    expect(types.at(-1)).toBe('workflow_execution_completed');
    expect(types).not.toContain('workflow_task_started');
    const started = res.body.steps.find(
      (s: { type: string }) => s.type === 'activity_task_started',
    );
    expect(started).toMatchObject({ activity: 'recordWorkerPing', attempt: 1 });
  });

  it("answers 404 for another tenant's run, as for an unknown id", async () => {
    for (const id of [bobPing, 'worker-ping-no-such-run']) {
      const res = await request(t.app)
        .get(`/api/workflow-runs/${id}`)
        .set('Authorization', `Bearer ${alice.token}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: `No workflow run ${id}` });
    }
  });
});
