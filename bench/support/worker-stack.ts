/**
 * For benchmarks that deliver alerts: a throw-away database (or MONGODB_URI) and Temporal, a local
 * HTTPS receiver trusting a throw-away CA, and a real worker process, with the environment the
 * benchmark's API side uses too.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Receiver } from '../../test/support/receiver';
import { freePort, provideMongo, provideTemporal, spawnManaged } from '../../tools/stack';

export async function startWorkerStack(name: string, extraEnv: Record<string, string> = {}) {
  const dir = await mkdtemp(join(tmpdir(), `tripwire-bench-${name}-`));
  const { makeTestCa } = await import('../../tools/test-ca.mjs');
  const ca = makeTestCa(dir);
  Object.assign(process.env, { TEST_TLS_CERT: ca.TEST_TLS_CERT, TEST_TLS_KEY: ca.TEST_TLS_KEY });
  const log = () => undefined;
  const mongo = await provideMongo({ dataDir: dir, port: await freePort(), log });
  const temporal = await provideTemporal({ dataDir: dir, port: await freePort(), log });
  const receiver = await Receiver.start();
  const env = {
    MONGODB_URI: mongo.address,
    MONGODB_DB: 'bench',
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: `bench-${name}`,
    ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
    LOG_LEVEL: 'warn',
    ...extraEnv,
  };
  const worker = spawnManaged(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
    env: { ...process.env, ...env, NODE_EXTRA_CA_CERTS: ca.NODE_EXTRA_CA_CERTS },
    onLine: (line) => console.error(`worker | ${line}`),
  });
  let stopping = false;
  const stopServers = async () => {
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
    /** The worker bundles its workflows before it polls. */
    ready: () => new Promise((r) => setTimeout(r, 8_000)),
    async stop() {
      stopping = true;
      await worker.stop();
      await stopServers();
    },
  };
}
