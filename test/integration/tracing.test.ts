import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { NativeConnection, Worker } from '@temporalio/worker';
import request from 'supertest';
import { createActivities } from '../../activities';
import { IpEnricher } from '../../src/alerts/enrichment';
import { startTracing, workerTracing, type Tracing } from '../../src/tracing';
import { signUpAndLogIn } from '../support/accounts';
import { Receiver } from '../support/receiver';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';

// The API and a worker in this process, sharing one tracer provider that keeps spans in memory:
// the same interceptors and spans as production, where each process exports over OTLP.
const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let t: TestApp;
let receiver: Receiver;
let worker: Worker;
let running: Promise<void>;
let connection: NativeConnection;

beforeAll(async () => {
  tracing = startTracing('tripwire-test', { exporter })!;
  t = await createTestApp({
    config: testConfig({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', ALERT_GATHER_MS: '0' }),
  });
  receiver = await Receiver.start();
  connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS });
  worker = await Worker.create({
    connection,
    taskQueue: t.config.TEMPORAL_TASK_QUEUE,
    workflowsPath: require.resolve('../../workflows'),
    ...workerTracing(tracing),
    activities: createActivities({
      db: t.mongo.db,
      allowPrivateTargets: true,
      builtIns: { smtpFrom: 'alerts@localhost', telegramApiBase: 'https://api.telegram.org' },
      enricher: new IpEnricher(),
    }),
  });
  running = worker.run();
});

afterAll(async () => {
  worker.shutdown();
  await running;
  await connection.close();
  await receiver.stop();
  await t.close();
  await tracing.shutdown();
});

/** The finished spans of one trace once `names` are all among them (or whatever came in time). */
async function traceWith(traceId: string, names: string[]): Promise<ReadableSpan[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    const seen = new Set(spans.map((s) => s.name));
    if (names.every((n) => seen.has(n)) || Date.now() > deadline) return spans;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('tracing', () => {
  it('when a canary fires, then one trace holds the request, the workflow, its activities and the delivery attempt', async () => {
    const who = await signUpAndLogIn(t.app);
    const auth = { Authorization: `Bearer ${who.token}` };
    await request(t.app)
      .post('/api/alert-channels')
      .set(auth)
      .send({ kind: 'discord', name: 'traced', url: receiver.url('/traced') })
      .expect(201);
    const canary = await request(t.app)
      .post('/api/canaries')
      .set(auth)
      .send({ kind: 'url', memo: 'traced page' })
      .expect(201);

    await request(t.app)
      .get(new URL(canary.body.value as string).pathname)
      .expect(200);
    expect(await receiver.waitFor('/traced')).toHaveLength(1);

    const hit = exporter.getFinishedSpans().find((s) => s.name === 'GET /r/:token');
    expect(hit).toBeDefined();
    const names = [
      'GET /r/:token',
      'StartWorkflow:alertWorkflow',
      'RunWorkflow:alertWorkflow',
      // A threat alert's first round: prepared, sealed and sent in one local activity.
      'StartActivity:sendThreatAlert',
      'RunActivity:sendThreatAlert',
      'alert delivery attempt',
    ];
    const spans = await traceWith(hit!.spanContext().traceId, names);
    expect(names.filter((n) => !spans.some((s) => s.name === n))).toEqual([]);

    // Each span hangs from another in the trace, up to the request's, which has no parent here.
    const ids = new Set(spans.map((s) => s.spanContext().spanId));
    const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
    const roots = spans.filter((s) => !parentOf(s) || !ids.has(parentOf(s)!));
    expect(roots.map((s) => s.name)).toEqual(['GET /r/:token']);
    const attempt = spans.find((s) => s.name === 'alert delivery attempt')!;
    expect(attempt.attributes).toMatchObject({
      'http.response.status_code': 200,
      'tripwire.delivery.verdict': 'delivered',
    });
    expect(hit!.attributes['http.route']).toBe('/r/:token');
  });

  it('when a request carries a traceparent, then its span continues that trace', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await request(t.app)
      .get('/healthz')
      .set('traceparent', `00-${traceId}-00f067aa0ba902b7-01`)
      .expect(200);
    const span = exporter
      .getFinishedSpans()
      .find((s) => s.spanContext().traceId === traceId && s.name === 'GET /healthz');
    expect(span?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
  });
});
