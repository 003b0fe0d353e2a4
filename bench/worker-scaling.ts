/**
 * Horizontal workers: alerts per second with 1, 2 and 4 worker processes on the same Temporal and
 * database, each alert a real alert workflow delivering to one channel at a local HTTPS receiver.
 * The 1-worker run is the baseline of the ratios. Worker tuning comes from the environment
 * (`WORKER_ACTIVITY_SLOTS`, `WORKER_WORKFLOW_TASK_SLOTS`, `WORKER_POLLERS`), so settings compare
 * by running it again with others.
 *
 *   npm run bench:workers -- [--alerts 200] [--concurrency 50] [--workers 1,2,4]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startAlert } from '../src/alerts/alert-workflows';
import { ChannelsRepository } from '../src/alerts/channels.repository';
import { connectMongo } from '../src/db/mongo';
import { createTemporal } from '../src/temporal/client';
import { tripwirePayload } from '../test/support/alerts';
import { Receiver } from '../test/support/receiver';
import {
  freePort,
  provideMongo,
  provideTemporal,
  spawnManaged,
  type ManagedProcess,
} from '../tools/stack';
import { pct, pool } from './support/latency';

const { values } = parseArgs({
  options: {
    alerts: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '50' },
    workers: { type: 'string', default: '1,2,4' },
  },
});
const ALERTS = Number(values.alerts);
const CONCURRENCY = Number(values.concurrency);
const COUNTS = values.workers.split(',').map(Number);

/** Resolves each alert's waiter when the receiver holds its request (`X-Service-Delivery: alert-<id>:…`). */
function arrivals(receiver: Receiver) {
  const waiting = new Map<string, () => void>();
  const seen = new Set<string>();
  let read = 0;
  const timer = setInterval(() => {
    for (; read < receiver.hits.length; read++) {
      const header = String(receiver.hits[read]!.headers['x-service-delivery']);
      const id = /^alert-([^:]+):/.exec(header)?.[1];
      if (!id) continue;
      seen.add(id);
      waiting.get(id)?.();
    }
  }, 2);
  return {
    wait: (id: string) =>
      new Promise<void>((resolve) => (seen.has(id) ? resolve() : waiting.set(id, resolve))),
    stop: () => clearInterval(timer),
  };
}

async function startWorkers(count: number, env: NodeJS.ProcessEnv): Promise<ManagedProcess[]> {
  const workers = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const port = await freePort();
      const proc = spawnManaged(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
        env: { ...env, WORKER_METRICS_PORT: String(port) },
        onLine: (line) => console.error(`worker-${i + 1} | ${line}`),
      });
      return { proc, health: `http://127.0.0.1:${port}/healthz` };
    }),
  );
  // Each worker bundles its workflows, then polls: /healthz answers 200 from then on.
  for (const { health } of workers) {
    while (
      !(await fetch(health).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return workers.map((w) => w.proc);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tripwire-bench-workers-'));
  const { makeTestCa } = await import('../tools/test-ca.mjs');
  const ca = makeTestCa(dir);
  Object.assign(process.env, { TEST_TLS_CERT: ca.TEST_TLS_CERT, TEST_TLS_KEY: ca.TEST_TLS_KEY });
  const quiet = () => undefined;
  const mongo = await provideMongo({ dataDir: dir, port: await freePort(), log: quiet });
  const temporalServer = await provideTemporal({
    dataDir: dir,
    port: await freePort(),
    log: quiet,
  });
  const receiver = await Receiver.start();
  const { client, db } = await connectMongo(mongo.address, 'bench');
  const arrived = arrivals(receiver);
  const rows: { workers: number; alertsPerSecond: number; latencies: number[] }[] = [];
  try {
    const accountId = 'usr_bench_scaling';
    await new ChannelsRepository(db).create(
      { accountId, kind: 'discord', name: 'scaling', url: receiver.url('/scaling'), secret: null },
      new Date(),
    );
    for (const count of COUNTS) {
      // A task queue per run, so no run inherits another's backlog or sticky workflows.
      const taskQueue = `bench-scaling-${count}-${Date.now()}`;
      const env = {
        ...process.env,
        MONGODB_URI: mongo.address,
        MONGODB_DB: 'bench',
        TEMPORAL_ADDRESS: temporalServer.address,
        TEMPORAL_TASK_QUEUE: taskQueue,
        ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
        LOG_LEVEL: 'warn',
        NODE_EXTRA_CA_CERTS: ca.NODE_EXTRA_CA_CERTS,
      };
      console.error(`${count} worker(s): starting…`);
      const workers = await startWorkers(count, env);
      const temporal = createTemporal({
        TEMPORAL_ADDRESS: temporalServer.address,
        TEMPORAL_NAMESPACE: 'default',
        TEMPORAL_TASK_QUEUE: taskQueue,
      });
      try {
        console.error(`${count} worker(s): ${ALERTS} alerts, ${CONCURRENCY} at a time…`);
        const run = await pool(ALERTS, CONCURRENCY, async (i) => {
          const threatEventId = `thr_w${count}_${i}_${Date.now()}`;
          const started = performance.now();
          await startAlert(temporal, {
            accountId,
            payload: tripwirePayload(threatEventId),
            threatEventId,
          });
          await arrived.wait(threatEventId);
          return performance.now() - started;
        });
        rows.push({
          workers: count,
          alertsPerSecond: ALERTS / run.seconds,
          latencies: run.latencies,
        });
      } finally {
        await temporal.close();
        await Promise.all(workers.map((w) => w.stop()));
      }
    }
    const base = rows[0]!.alertsPerSecond;
    const tuning = ['WORKER_ACTIVITY_SLOTS', 'WORKER_WORKFLOW_TASK_SLOTS', 'WORKER_POLLERS']
      .map((name) => `${name}=${process.env[name] ?? 'default'}`)
      .join(', ');
    console.log(`\n${ALERTS} alerts per run, ${CONCURRENCY} at a time; ${tuning}\n`);
    console.log(
      `| Workers | alerts/s | vs ${rows[0]!.workers} worker | p50 ms | p95 ms | p99 ms |`,
    );
    console.log('| ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const { workers, alertsPerSecond, latencies: l } of rows) {
      console.log(
        `| ${workers} | ${alertsPerSecond.toFixed(1)} | ${(alertsPerSecond / base).toFixed(2)}× | ${pct(l, 50).toFixed(0)} | ${pct(l, 95).toFixed(0)} | ${pct(l, 99).toFixed(0)} |`,
      );
    }
  } finally {
    arrived.stop();
    await client.close();
    await receiver.stop();
    await temporalServer.stop();
    await mongo.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
