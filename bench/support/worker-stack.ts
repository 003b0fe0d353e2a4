/**
 * For benchmarks that deliver alerts: a throw-away database (or MONGODB_URI) and Temporal, a local
 * HTTPS receiver trusting a throw-away CA, and a real worker process as deployed (`dist/`, see
 * ./built.ts), with the environment the benchmark's API side uses too. The worker's metrics take a
 * free loopback port, so two benchmarks (or a benchmark beside `npm run dev`) never collide.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Receiver } from '../../test/support/receiver';
import { ALL_INDEXES } from '../../src/db/indexes';
import { connectMongo, ensureIndexes } from '../../src/db/mongo';
import {
  freePort,
  provideMongo,
  provideTemporal,
  spawnManaged,
  type ManagedProcess,
} from '../../tools/stack';
import { builtStartArgs, nodeFlagsFrom } from './built';
import { StackCpu, type Part } from './cpu';

const DB_NAME = 'bench';

export interface WorkerStackOptions {
  /** Off only to measure what the dev server's tuning is worth (`bench:alert-path --untuned`). */
  tuned?: boolean;
  /** Extra node flags for the worker (`--cpu-prof`, say). */
  nodeFlags?: string[];
}

export async function startWorkerStack(
  name: string,
  extraEnv: Record<string, string> = {},
  { tuned = true, nodeFlags = nodeFlagsFrom('BENCH_WORKER_NODE_FLAGS') }: WorkerStackOptions = {},
) {
  const dir = await mkdtemp(join(tmpdir(), `tripwire-bench-${name}-`));
  const { makeTestCa } = await import('../../tools/test-ca.mjs');
  const ca = makeTestCa(dir);
  Object.assign(process.env, { TEST_TLS_CERT: ca.TEST_TLS_CERT, TEST_TLS_KEY: ca.TEST_TLS_KEY });
  const log = () => undefined;
  const mongo = await provideMongo({ dataDir: dir, port: await freePort(), log });
  const temporal = await provideTemporal({ dataDir: dir, port: await freePort(), log, tuned });
  await withIndexes(mongo.address);
  const receiver = await Receiver.start();
  const metricsPort = await freePort();
  const env = {
    MONGODB_URI: mongo.address,
    MONGODB_DB: DB_NAME,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: `bench-${name}-${Date.now()}`,
    ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
    LOG_LEVEL: 'warn',
    // The API side's hit journal: this run's own, not the worktree's `.data`.
    TRIPWIRE_JOURNAL_DIR: join(dir, 'tripwire-journal'),
    ...extraEnv,
  };
  const worker = spawnManaged(process.execPath, [...nodeFlags, ...builtStartArgs('start:worker')], {
    env: {
      ...process.env,
      ...env,
      // The worker's only listener is its metrics endpoint: loopback, on a port of its own.
      HOST: '127.0.0.1',
      WORKER_METRICS_PORT: String(metricsPort),
      NODE_EXTRA_CA_CERTS: ca.NODE_EXTRA_CA_CERTS,
    },
    onLine: (line) => console.error(`worker | ${line}`),
  });
  let stopping = false;
  const endpoints: ManagedProcess[] = [];
  const stopServers = async () => {
    await Promise.all(endpoints.map((endpoint) => endpoint.stop()));
    await receiver.stop();
    await temporal.stop();
    await mongo.stop();
    await rm(dir, { recursive: true, force: true });
  };
  // A benchmark waiting for deliveries would otherwise wait for ever on a worker that has died.
  void worker.exited.then(async (code) => {
    if (stopping) return;
    console.error(`the worker exited (code ${code}) before the benchmark ended`);
    await stopServers();
    process.exit(1);
  });
  return {
    env,
    receiver,
    /**
     * A customer's endpoint in a process of its own (./endpoint-process.ts), answering 200: unlike
     * `receiver`, which shares the benchmark's process, its CPU is in no part of `cpu()`'s.
     */
    async endpoint(): Promise<{ url: (path: string) => string }> {
      const port = await new Promise<string>((resolve, reject) => {
        const endpoint = spawnManaged(
          process.execPath,
          ['--import', 'tsx', join(__dirname, 'endpoint-process.ts')],
          { onLine: (line) => (/^\d+$/.test(line) ? resolve(line) : console.error(line)) },
        );
        endpoints.push(endpoint);
        void endpoint.exited.then((code) => reject(new Error(`the endpoint exited (${code})`)));
      });
      return { url: (path) => `https://127.0.0.1:${port}${path}` };
    },
    /** Resolves once the worker has bundled its workflows and polls: its /healthz answers 200. */
    async ready() {
      const health = `http://127.0.0.1:${metricsPort}/healthz`;
      while (
        !(await fetch(health).then(
          (r) => r.ok,
          () => false,
        ))
      ) {
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    /** The database's process, when the stack started one (not for MONGODB_URI). */
    databasePid: mongo.pid,
    /** The worker's process (its CPU by thread: `threadSeconds`). */
    workerPid: worker.child.pid!,
    /** The stack's CPU by part; `api` is the process serving the API (this one unless given). */
    cpu(roots: Partial<Record<Part, number>> = { api: process.pid }) {
      return new StackCpu({
        worker: worker.child.pid!,
        temporal: temporal.pid,
        database: mongo.pid,
        ...roots,
      });
    },
    async stop() {
      stopping = true;
      await worker.stop();
      await stopServers();
    },
  };
}

/** The service's indexes, as the API makes them at its start: the worker's queries and writes use them. */
async function withIndexes(address: string): Promise<void> {
  const { client, db } = await connectMongo(address, DB_NAME);
  try {
    await ensureIndexes(db, ALL_INDEXES);
  } finally {
    await client.close();
  }
}
