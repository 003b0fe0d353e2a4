/**
 * Horizontal workers: alerts per second with 1, 2 and 4 worker processes (as deployed: `dist/`,
 * see support/built.ts) on the same Temporal and database, each alert a real alert workflow
 * delivering to one channel at a local HTTPS receiver.
 * Every group of workers runs all along on a task queue of its own; the groups take turns round
 * by round, `--alerts` alerts each, until resolved (bench/support/rounds.ts), the first group (1
 * worker) the baseline. Beside the rates, the CPU per alert of Temporal, the database, this
 * process (the client) and the workers: all worker processes together, the idle groups' polling
 * included. Worker tuning comes from the environment (`WORKER_ACTIVITY_SLOTS`,
 * `WORKER_WORKFLOW_TASK_SLOTS`, `WORKER_POLLERS`), so settings compare by running it again with
 * others.
 *
 *   npm run bench:workers -- [--alerts 100] [--concurrency 50] [--workers 1,2,4]
 *       [--min-rounds 5] [--max-rounds 15]
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startAlert } from '../src/alerts/alert-workflows';
import { ChannelsRepository } from '../src/alerts/channels.repository';
import { connectMongo } from '../src/db/mongo';
import { createTemporal, type Temporal } from '../src/temporal/client';
import { tripwirePayload } from '../test/support/alerts';
import { Receiver } from '../test/support/receiver';
import {
  freePort,
  provideMongo,
  provideTemporal,
  spawnManaged,
  type ManagedProcess,
} from '../tools/stack';
import { builtStartArgs } from './support/built';
import { StackCpu, type CpuReading } from './support/cpu';
import { pool } from './support/latency';
import { interleave, printComparison, type CpuMeter, type Variant } from './support/rounds';

const { values } = parseArgs({
  options: {
    alerts: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '50' },
    workers: { type: 'string', default: '1,2,4' },
  },
  allowPositionals: true,
  strict: false,
});
const ALERTS = Number(values.alerts);
const CONCURRENCY = Number(values.concurrency);
const COUNTS = String(values.workers).split(',').map(Number);

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

async function startWorkers(
  count: number,
  env: NodeJS.ProcessEnv,
  name: string,
): Promise<ManagedProcess[]> {
  const workers = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const port = await freePort();
      const proc = spawnManaged(process.execPath, builtStartArgs('start:worker'), {
        // Its only listener, the metrics endpoint: loopback, on a port of its own.
        env: { ...env, HOST: '127.0.0.1', WORKER_METRICS_PORT: String(port) },
        onLine: (line) => console.error(`${name}-${i + 1} | ${line}`),
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

/** `stack`'s parts, and as `worker` the CPU of every worker process (and its children) summed. */
function withWorkers(stack: StackCpu, workers: ManagedProcess[]): CpuMeter {
  const each = workers.map((w) => new StackCpu({ worker: w.child.pid }));
  return {
    parts: () => ['worker', ...stack.parts()],
    read: (): CpuReading => {
      const worker = each.reduce((sum, one) => sum + (one.read().get('worker') ?? 0), 0);
      return new Map([['worker', worker], ...stack.read()]);
    },
  };
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
  const groups: { count: number; workers: ManagedProcess[]; temporal: Temporal }[] = [];
  try {
    const accountId = 'usr_bench_scaling';
    await new ChannelsRepository(db).create(
      { accountId, kind: 'discord', name: 'scaling', url: receiver.url('/scaling'), secret: null },
      new Date(),
    );
    for (const count of COUNTS) {
      // A task queue per group, so no group takes another's alerts or sticky workflows.
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
      const workers = await startWorkers(count, env, `group-${count}`);
      const temporal = createTemporal({
        TEMPORAL_ADDRESS: temporalServer.address,
        TEMPORAL_NAMESPACE: 'default',
        TEMPORAL_TASK_QUEUE: taskQueue,
      });
      groups.push({ count, workers, temporal });
    }
    const alerts = (temporal: Temporal, count: number, n: number) => async () => {
      const run = await pool(n, CONCURRENCY, async (i) => {
        const threatEventId = `thr_w${count}_${i}_${randomUUID()}`;
        const started = performance.now();
        await startAlert(temporal, {
          accountId,
          payload: tripwirePayload(threatEventId),
          threatEventId,
        });
        await arrived.wait(threatEventId);
        return performance.now() - started;
      });
      return { ops: n, latencies: run.latencies };
    };
    // Warm-up: each group's first workflow tasks and connections are not what is measured.
    for (const { temporal, count } of groups) await alerts(temporal, count, 20)();

    const variants: Record<string, Variant> = {};
    for (const { count, temporal } of groups) {
      variants[
        `${count} worker${count > 1 ? 's' : ''}${count === COUNTS[0] ? ' (baseline)' : ''}`
      ] = alerts(temporal, count, ALERTS);
    }
    const tuning = ['WORKER_ACTIVITY_SLOTS', 'WORKER_WORKFLOW_TASK_SLOTS', 'WORKER_POLLERS']
      .map((name) => `${name}=${process.env[name] ?? 'default'}`)
      .join(', ');
    printComparison(
      `${ALERTS} alerts a round per group, ${CONCURRENCY} at a time, each delivered to a local HTTPS receiver; ${tuning}; worker CPU is every worker process's, all groups together`,
      await interleave(
        variants,
        withWorkers(
          new StackCpu({
            temporal: temporalServer.pid,
            database: mongo.pid,
            client: process.pid,
          }),
          groups.flatMap((g) => g.workers),
        ),
      ),
    );
  } finally {
    for (const { temporal, workers } of groups) {
      await temporal.close();
      await Promise.all(workers.map((w) => w.stop()));
    }
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
