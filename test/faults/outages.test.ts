/**
 * Fault suite (`npm run test:faults`): real processes killed and started again. The database of
 * this file is a process of its own, SIGKILLed while the app runs; the Temporal case points an app
 * at a Temporal address that answers nothing and lets a second app reconcile. Prints Fault | Fired
 * | Lost.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { freePort, startLocalMongo, type LocalMongo } from '../../tools/stack';
import { signUpAndLogIn } from '../support/accounts';
import { Receiver } from '../support/receiver';
import { createTestApp, testConfig } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';

const table: string[] = ['| Fault | Fired | Lost |', '|---|---|---|'];
afterAll(() => console.log(table.join('\n')));

describe('faults', () => {
  it('when Temporal is down while tripwires fire, then every threat event is alerted exactly once once it answers', async () => {
    const config = testConfig({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', ALERT_GATHER_MS: '200' });
    const down = await createTestApp({
      config: { ...config, TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` },
    });
    const up = await createTestApp({ config, clock: () => new Date(Date.now() + 60_000) });
    const worker = await startTestWorker(up.mongo.db, config.TEMPORAL_TASK_QUEUE);
    const receiver = await Receiver.start();
    try {
      const who = await signUpAndLogIn(down.app);
      const auth = { Authorization: `Bearer ${who.token}` };
      await request(down.app)
        .post('/api/alert-channels')
        .set(auth)
        .send({ kind: 'slack', name: 'ops', url: receiver.url('/alerts') })
        .expect(201);
      const FIRED = 5;
      for (let i = 0; i < FIRED; i++) {
        const planted = await request(down.app)
          .post('/api/canaries')
          .set(auth)
          .send({ kind: 'url', memo: `page ${i}` })
          .expect(201);
        const path = new URL((planted.body as { value: string }).value).pathname;
        await request(down.app).get(path).set('user-agent', 'curl/8').expect(200);
      }
      await down.tripwires.flush();
      const events = await up.mongo.db.collection('threat_events').find().toArray();
      expect(events).toHaveLength(FIRED);

      await up.reconciler.reconcileOnce();
      await up.reconciler.reconcileOnce();
      for (const e of events) {
        await up.temporal.client.workflow.getHandle(`alert-${String(e._id)}`).result();
      }
      const ids = receiver
        .hitsOn('/alerts')
        .map((h) => (JSON.parse(h.rawBody.toString()) as { text?: string }).text ?? '');
      const lost = FIRED - receiver.hitsOn('/alerts').length;
      table.push(`| Temporal unreachable while ${FIRED} tripwires fire | ${FIRED} | ${lost} |`);
      expect(ids).toHaveLength(FIRED);
    } finally {
      await worker.stop();
      await receiver.stop();
      await down.disconnect();
      await up.close();
    }
  });

  it('when the database is SIGKILLed, then routes answer 503 naming MongoDB, and work again once it is back', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fault-db-'));
    const port = await freePort();
    const start = () => startLocalMongo({ dataDir, port, log: () => {} });
    let db: LocalMongo = await start();
    const t = await createTestApp({ config: testConfig({ MONGODB_URI: db.address }) });
    try {
      const who = await signUpAndLogIn(t.app);
      process.kill(-db.process.child.pid!, 'SIGKILL');
      await db.process.exited;
      const during = await request(t.app)
        .get('/api/users/me')
        .set({ Authorization: `Bearer ${who.token}` });
      expect([during.status, during.body.detail?.dependency]).toEqual([503, 'mongodb']);

      db = await start();
      let after = 0;
      for (let i = 0; i < 50 && after !== 200; i++) {
        after = (
          await request(t.app)
            .get('/api/users/me')
            .set({ Authorization: `Bearer ${who.token}` })
        ).status;
      }
      table.push(
        `| database SIGKILLed, then restarted | 1 request during, 1 after | 0 (503 with detail, then 200) |`,
      );
      expect(after).toBe(200);
    } finally {
      await t.close();
      await db.stop();
    }
  });
});
