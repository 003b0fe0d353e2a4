import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createKey, signUpAndLogIn, type SignedIn } from '../support/accounts';
import { bearer } from '../support/canary-accounts';
import { createTestApp, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';

/** Two API processes on one database: hits recorded by `a`, streamed by `b`. */
let a: TestApp;
let b: TestApp;
let server: Server;
let base: string;

let worker: { stop(): Promise<void> };

beforeAll(async () => {
  a = await createTestApp();
  worker = await startTestWorker(a.mongo.db, a.config.TEMPORAL_TASK_QUEUE);
  b = await createTestApp({ config: a.config });
  server = b.app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await worker.stop();
  await b.disconnect().catch(() => undefined);
  await new Promise((resolve) => server.close(resolve));
  await a.close();
});

interface Received {
  type: string;
  id: string;
  data: Record<string, unknown>;
}

/**
 * A stream from `b`, read as an EventSource reads one (blocks split by a blank line; `id:`,
 * `event:`, `data:` fields). The console's own client (the `eventsource` package, ESM only, which
 * Jest cannot load) is exercised by the browser test.
 */
function listen(headers: Record<string, string>, lastEventId?: string) {
  const received: Received[] = [];
  const controller = new AbortController();
  const open = fetch(`${base}/api/threat-events/stream`, {
    headers: { ...headers, ...(lastEventId && { 'Last-Event-ID': lastEventId }) },
    signal: controller.signal,
  }).then((res) => {
    if (res.status !== 200) throw new Error(`stream refused: ${res.status}`);
    void (async () => {
      let buffer = '';
      for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end).split('\n');
          buffer = buffer.slice(end + 2);
          const field = (name: string) =>
            block.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
          const data = field('data');
          if (data === undefined) continue;
          received.push({
            type: field('event') ?? 'message',
            id: field('id') ?? '',
            data: JSON.parse(data) as Record<string, unknown>,
          });
        }
      }
    })().catch(() => undefined);
  });
  return { received, open, close: () => controller.abort() };
}

async function until<T>(what: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = what();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function plantAndFire(who: SignedIn, times = 1) {
  const res = await request(a.app)
    .post('/api/canaries')
    .set(bearer(who))
    .send({ kind: 'url', memo: 'streamed' });
  const { canary_id, value } = res.body as { canary_id: string; value: string };
  for (let i = 0; i < times; i++) await request(a.app).get(new URL(value).pathname);
  await a.tripwires.flush();
  return canary_id;
}

describe('GET /api/threat-events/stream', () => {
  it("when a hit and its alert are recorded by another API process, then the owner's stream gets them and another account's does not; a reconnect resumes", async () => {
    const owner = await signUpAndLogIn(a.app);
    const other = await signUpAndLogIn(a.app);
    const mine = listen(bearer(owner));
    const theirs = listen(bearer(other));
    try {
      await Promise.all([mine.open, theirs.open]);
      const canaryId = await plantAndFire(owner, 2);

      const hits = await until(() => {
        const got = mine.received.filter((e) => e.type === 'hit');
        return got.length === 2 ? got : undefined;
      });
      for (const hit of hits) {
        expect(hit.data).toMatchObject({
          canary_id: canaryId,
          threat_event_id: expect.stringMatching(/^thr_/),
          hit_id: expect.any(String),
        });
        expect(hit.id).toMatch(/^\d+-/);
      }
      // The alert, once enrichment and risk are in, is announced too.
      const alert = await until(() => mine.received.find((e) => e.type === 'alert'));
      expect(alert.data).toMatchObject({
        threat_event_id: hits[0]!.data.threat_event_id,
        canary_id: canaryId,
        risk_level: expect.any(String),
      });
      // Both streams are served by the same poll: by now the other account's would have its hit.
      await new Promise((r) => setTimeout(r, 2_000));
      expect(theirs.received).toEqual([]);

      // A client back with the first hit's id gets what came after it (the second hit).
      const again = listen(bearer(owner), hits[0]!.id);
      try {
        await again.open;
        const resumed = await until(() =>
          again.received.find((e) => e.data.hit_id === hits[1]!.data.hit_id),
        );
        expect(resumed.type).toBe('hit');
        expect(again.received.some((e) => e.data.hit_id === hits[0]!.data.hit_id)).toBe(false);
      } finally {
        again.close();
      }

      // One older than the process remembers: the client is told to re-read its lists.
      const stale = listen(bearer(owner), `1-hit_gone`);
      try {
        await stale.open;
        await until(() => stale.received.find((e) => e.type === 'reset'));
        expect(stale.received.filter((e) => e.type === 'hit')).toEqual([]);
      } finally {
        stale.close();
      }
    } finally {
      mine.close();
      theirs.close();
    }
  });

  it('when the caller has no credential or a key without threats:read, then it is refused; a key with it streams', async () => {
    const url = `${base}/api/threat-events/stream`;
    const anonymous = await fetch(url);
    expect(anonymous.status).toBe(401);
    const who = await signUpAndLogIn(a.app);
    const canariesOnly = await createKey(a.app, who.token, { scopes: ['canaries:read'] });
    const refused = await fetch(url, { headers: { 'X-API-Key': canariesOnly.key } });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { detail: string }).detail).toContain('scope');

    const reader = await createKey(a.app, who.token, { scopes: ['threats:read'] });
    const stream = listen({ 'X-API-Key': reader.key });
    try {
      await stream.open;
      const canaryId = await plantAndFire(who);
      const hit = await until(() => stream.received.find((e) => e.type === 'hit'));
      expect(hit.data.canary_id).toBe(canaryId);
    } finally {
      stream.close();
    }
  });
});
