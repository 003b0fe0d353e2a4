import { resolve } from 'node:path';
import request from 'supertest';
import { startAlert } from '../../src/alerts/alert-workflows';
import { spawnManaged, type ManagedProcess } from '../../tools/stack';
import { tripwirePayload } from '../support/alerts';
import { signUpAndLogIn } from '../support/accounts';
import { Receiver } from '../support/receiver';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';

// The real worker entry point in its own process, so it can be killed outright (SIGKILL).
function startWorkerProcess(t: TestApp): Promise<ManagedProcess> {
  return new Promise((ready, fail) => {
    const worker = spawnManaged(resolve('node_modules/.bin/tsx'), ['src/worker.ts'], {
      env: {
        ...process.env,
        MONGODB_URI: t.config.MONGODB_URI,
        MONGODB_DB: t.config.MONGODB_DB,
        TEMPORAL_ADDRESS: t.config.TEMPORAL_ADDRESS,
        TEMPORAL_TASK_QUEUE: t.config.TEMPORAL_TASK_QUEUE,
        ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
        LOG_LEVEL: 'info',
      },
      onLine: (line) => {
        if (line.includes('worker running')) ready(worker);
      },
    });
    void worker.exited.then((code) => fail(new Error(`worker exited with ${code}`)));
  });
}

let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  t = await createTestApp({ config: testConfig({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' }) });
  receiver = await Receiver.start();
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});

describe('worker restarts', () => {
  it('when the worker is killed mid-delivery and another starts, then the alert is still delivered', async () => {
    const who = await signUpAndLogIn(t.app);
    const path = '/delay/3000';
    const created = await request(t.app)
      .post('/api/alert-channels')
      .set('Authorization', `Bearer ${who.token}`)
      .send({
        kind: 'webhook',
        name: 'slow',
        url: receiver.url(path),
        secret: 'restart-test-secret-1',
      });
    const threatEventId = `thr_restart_${who.userId}`;
    const payload = tripwirePayload(threatEventId);

    const first = await startWorkerProcess(t);
    const handle = await startAlert(t.temporal, { accountId: who.userId, payload, threatEventId });
    for (const deadline = Date.now() + 30_000; !receiver.hitsOn(path).length;) {
      if (Date.now() > deadline) throw new Error('the first worker never reached the receiver');
      await new Promise((r) => setTimeout(r, 100));
    }
    // The first attempt is in flight: kill the worker's whole process group, its answer never comes back.
    process.kill(-first.child.pid!, 'SIGKILL');
    await first.exited;

    const second = await startWorkerProcess(t);
    try {
      const { results } = await handle.result();
      const channelResult = results.find((r) => r.channelId === created.body.id);
      expect(channelResult).toMatchObject({ outcome: 'delivered', status: 200 });
      const hits = receiver.hitsOn(path);
      expect(hits.length).toBeGreaterThanOrEqual(2);
      // Every copy carries the same delivery id, so the receiver can drop the repeat.
      expect(new Set(hits.map((h) => h.headers['x-service-delivery'])).size).toBe(1);
    } finally {
      await second.stop();
    }
  }, 90_000);
});
