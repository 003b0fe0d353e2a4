import { MongoClient } from 'mongodb';
import request from 'supertest';
import { createApp } from '../../src/app';
import { API_OPERATIONS } from '../../src/api';
import { openApiDocumentView } from '../../src/openapi/document';
import { createTemporal } from '../../src/temporal/client';
import { freePort } from '../../tools/stack';
import { createTestApp, testConfig, testLogger, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('request plumbing', () => {
  it('when /openapi.json is asked for, then the API reference comes without credentials', async () => {
    const res = await request(t.app).get('/openapi.json');
    expect(res.status).toBe(200);
    openApiDocumentView.parse(res.body);
    expect(res.body).toMatchObject({
      openapi: '3.1.0',
      servers: [{ url: t.config.PUBLIC_BASE_URL }],
    });
    expect(res.body.paths['/shield/inspect'].post['x-required-scope']).toBe('shield:write');
    // The readable page carries the same document, which Redoc (served from here) renders.
    const page = await request(t.app).get('/docs');
    expect(page.type).toBe('text/html');
    const block = /<script type="application\/json" id="openapi">(.*?)<\/script>/s.exec(page.text);
    expect(JSON.parse(block![1]!)).toEqual(res.body);
    for (const src of page.text.match(/(?<=<script src=")[^"]+/g)!) {
      const asset = await request(t.app).get(src);
      expect([src, asset.status, asset.type]).toEqual([src, 200, 'application/javascript']);
    }
    expect((await request(t.app).get('/docs/assets/nothing.js')).status).toBe(404);
  });

  it('when a public route gets an invalid X-API-Key, then 401 exactly where the reference says', async () => {
    for (const op of API_OPERATIONS.filter((o) => o.auth === 'none')) {
      const path = op.path.replace(/\{\w+\}/g, 'x');
      const res = await request(t.app)[op.method](path).set('X-API-Key', 'svc_notakey');
      // The API's refusal has a detail; the decoy Kubernetes API's own 401 is a Status object.
      const refused = res.status === 401 && (res.body as { detail?: unknown }).detail !== undefined;
      expect([op.method, op.path, refused]).toEqual([op.method, op.path, !op.beforeKeyLayer]);
    }
  });

  it('when a route is unknown, then it answers 404 JSON with a detail', async () => {
    const res = await request(t.app).get('/no/such/route');
    expect(res.status).toBe(404);
    expect(res.type).toBe('application/json');
    expect(res.body).toEqual({ detail: 'No route for GET /no/such/route' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('when the caller sends a sane X-Request-ID, then the same value comes back', async () => {
    const res = await request(t.app).get('/healthz').set('X-Request-ID', 'trace-42.abc:1');
    expect(res.headers['x-request-id']).toBe('trace-42.abc:1');
  });

  it('when the caller sends an unsafe X-Request-ID, then a fresh one replaces it', async () => {
    for (const bad of ['has space', 'x'.repeat(200), '<script>', '']) {
      const res = await request(t.app).get('/healthz').set('X-Request-ID', bad);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('when the JSON body is malformed, then 422 says so and carries a request id', async () => {
    const res = await request(t.app)
      .post('/api/auth/login')
      .set('Content-Type', 'application/json')
      .send('{"email": "a@b.c",');
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/^body: malformed JSON/);
    expect(res.headers['x-request-id']).toBeDefined();
  });

  it('when a required field is missing, then 422 names the field', async () => {
    const res = await request(t.app).post('/api/auth/login').send({ email: 'a@example.com' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: 'body.password: Required' });
  });

  it('when the body is over the size limit, then 413 JSON names the limit', async () => {
    const res = await request(t.app)
      .post('/api/auth/login')
      .send({ email: 'a@example.com', password: 'x'.repeat(200_000) });
    expect(res.status).toBe(413);
    expect(res.body.detail).toMatch(/^body: larger than the 102400 byte limit/);
  });

  it('when the process is up, then /healthz answers ok', async () => {
    const res = await request(t.app).get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('when MongoDB, Temporal and indexes are in place but no worker polls, then /readyz is ready and says so', async () => {
    const res = await request(t.app).get('/readyz');
    expect(res.body).toEqual({
      status: 'ready',
      checks: { mongodb: { ok: true }, temporal: { ok: true }, indexes: { ok: true } },
      workers: {
        ok: false,
        pollers: 0,
        error: `no worker polls task queue ${t.config.TEMPORAL_TASK_QUEUE}`,
      },
    });
    expect(res.status).toBe(200);
  });

  it('when a worker polls the task queue, then /readyz counts it', async () => {
    const worker = await startTestWorker(t.mongo.db, t.config.TEMPORAL_TASK_QUEUE);
    try {
      let workers: unknown;
      for (let i = 0; i < 100; i++) {
        ({ workers } = (await request(t.app).get('/readyz')).body as { workers: unknown });
        if ((workers as { ok: boolean }).ok) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(workers).toEqual({ ok: true, pollers: 1 });
    } finally {
      await worker.stop();
    }
  });

  it('when an index is missing, then /readyz is 503 and names it', async () => {
    await t.mongo.db.collection('sessions').dropIndex('token_hash_unique');
    try {
      const res = await request(t.app).get('/readyz');
      expect(res.status).toBe(503);
      expect(res.body.checks.indexes).toEqual({
        ok: false,
        error: 'missing: sessions.token_hash_unique',
      });
    } finally {
      await t.mongo.db
        .collection('sessions')
        .createIndex({ tokenHash: 1 }, { name: 'token_hash_unique', unique: true });
    }
  });

  it('when MongoDB and Temporal are unreachable, then /readyz is 503 with each failure', async () => {
    const deadPort = await freePort();
    const config = testConfig({ TEMPORAL_ADDRESS: `127.0.0.1:${deadPort}` });
    const client = new MongoClient(`mongodb://127.0.0.1:${deadPort}/`, {
      serverSelectionTimeoutMS: 300,
    });
    const temporal = createTemporal(config);
    const { app } = createApp({
      config,
      logger: testLogger(config),
      mongo: { client, db: client.db('unreachable') },
      temporal,
    });
    try {
      const res = await request(app).get('/readyz');
      expect(res.status).toBe(503);
      expect(res.body.status).toBe('unavailable');
      expect(res.body.checks.mongodb.ok).toBe(false);
      expect(res.body.checks.mongodb.error).toEqual(expect.any(String));
      expect(res.body.checks.temporal.ok).toBe(false);
      expect(res.body.checks.indexes).toEqual({ ok: false, error: 'MongoDB unreachable' });
      expect(res.body.workers).toEqual({ ok: false, error: 'Temporal unreachable' });
      const login = await request(app)
        .post('/api/auth/login')
        .send({ email: 'a@example.com', password: 'whatever-password' });
      expect([login.status, login.headers['retry-after'], login.body]).toEqual([
        503,
        '5',
        {
          detail: {
            error: 'dependency_unavailable',
            dependency: 'mongodb',
            message: 'MongoDB is unavailable right now: retry shortly',
          },
        },
      ]);
    } finally {
      await client.close();
      await temporal.close();
    }
  });

  it("when the app's database client is gone inside a route, then 503 names MongoDB and nothing of the internals", async () => {
    const broken = await createTestApp();
    await broken.mongo.db.dropDatabase();
    await broken.appMongo.client.close();
    const res = await request(broken.app)
      .post('/api/auth/login')
      .send({ email: 'a@example.com', password: 'whatever-password' });
    expect(res.status).toBe(503);
    expect(res.body.detail).toMatchObject({
      error: 'dependency_unavailable',
      dependency: 'mongodb',
    });
    await broken.disconnect();
  });
});
