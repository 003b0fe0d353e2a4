/**
 * The alert path against the engine's limit: alerts per second and latency of the alert workflow
 * (one webhook channel, and three), each from its start to its result (delivered and recorded),
 * against a trivial one-activity workflow (`workerPingWorkflow`: one database write) on the same
 * dev server and worker, in the same run, at 1, 10 and 50 concurrent workflows. The paths take
 * turns round by round, and each keeps its median round. The unconfigured built-in channels (email,
 * chat) are part of every alert, as on a fresh deployment.
 *
 *   npm run bench:alert-path -- [--rounds 3] [--levels 1,10,50] [--untuned]
 *
 * `--untuned` starts the dev server without `DEV_SERVER_TUNING` (tools/stack.ts), to measure it.
 * Worker tuning comes from the environment (`WORKER_ACTIVITY_SLOTS`, …), as in `bench:workers`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startAlert } from '../src/alerts/alert-workflows';
import { ChannelsRepository } from '../src/alerts/channels.repository';
import { connectMongo } from '../src/db/mongo';
import { createTemporal } from '../src/temporal/client';
import { tripwirePayload } from '../test/support/alerts';
import { Receiver } from '../test/support/receiver';
import type { workerPingWorkflow } from '../workflows';
import { freePort, provideMongo, provideTemporal, spawnManaged } from '../tools/stack';
import { pct, pool } from './support/latency';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    levels: { type: 'string', default: '1,10,50' },
    untuned: { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(values.rounds);
const LEVELS = values.levels.split(',').map(Number);
/**
 * Enough workflows per round that a level's steady state dominates its ramp-up and a second's
 * hiccup of the shared machine: ten waves (at least 50 workflows), several seconds a sample.
 */
const countAt = (concurrency: number) => Math.max(50, concurrency * 10);

interface Sample {
  perSecond: number;
  p50: number;
  p99: number;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tripwire-bench-alert-path-'));
  const { makeTestCa } = await import('../tools/test-ca.mjs');
  const ca = makeTestCa(dir);
  Object.assign(process.env, { TEST_TLS_CERT: ca.TEST_TLS_CERT, TEST_TLS_KEY: ca.TEST_TLS_KEY });
  const quiet = () => undefined;
  const mongo = await provideMongo({ dataDir: dir, port: await freePort(), log: quiet });
  const server = await provideTemporal({
    dataDir: dir,
    port: await freePort(),
    log: quiet,
    tuned: !values.untuned,
  });
  const receiver = await Receiver.start();
  const { client, db } = await connectMongo(mongo.address, 'bench');
  const taskQueue = `bench-alert-path-${Date.now()}`;
  const metricsPort = await freePort();
  const worker = spawnManaged(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
    env: {
      ...process.env,
      MONGODB_URI: mongo.address,
      MONGODB_DB: 'bench',
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      LOG_LEVEL: 'warn',
      WORKER_METRICS_PORT: String(metricsPort),
      NODE_EXTRA_CA_CERTS: ca.NODE_EXTRA_CA_CERTS,
    },
    onLine: (line) => console.error(`worker | ${line}`),
  });
  const temporal = createTemporal({
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
  });
  try {
    // The worker bundles its workflows, then polls: /healthz answers 200 from then on.
    const health = `http://127.0.0.1:${metricsPort}/healthz`;
    while (
      !(await fetch(health).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      await new Promise((r) => setTimeout(r, 250));
    }
    const channels = new ChannelsRepository(db);
    const accounts = { 1: 'usr_bench_one', 3: 'usr_bench_three' } as const;
    for (const [n, accountId] of Object.entries(accounts)) {
      for (let c = 0; c < Number(n); c++) {
        await channels.create(
          {
            accountId,
            kind: 'webhook',
            name: `c${c}`,
            url: receiver.url(`/a${n}/c${c}`),
            secret: 'benchmark-webhook-secret',
          },
          new Date(),
        );
      }
    }

    const trivial = async () => {
      const started = performance.now();
      await temporal.client.workflow.execute<typeof workerPingWorkflow>('workerPingWorkflow', {
        taskQueue,
        workflowId: `bench-ping-${randomUUID()}`,
        args: [{ accountId: 'usr_bench_ping', requestId: 'bench' }],
      });
      return performance.now() - started;
    };
    const alert = (channelCount: 1 | 3) => async () => {
      const threatEventId = `thr_bench_${randomUUID()}`;
      const started = performance.now();
      const handle = await startAlert(temporal, {
        accountId: accounts[channelCount],
        payload: tripwirePayload(threatEventId),
        threatEventId,
      });
      const { results } = await handle.result();
      const delivered = results.filter((r) => r.outcome === 'delivered').length;
      if (delivered !== channelCount) throw new Error(`${threatEventId}: ${delivered} delivered`);
      return performance.now() - started;
    };
    const paths = {
      'trivial workflow (baseline)': trivial,
      'alert, 1 channel': alert(1),
      'alert, 3 channels': alert(3),
    };

    // Warm-up: the worker's first workflow tasks and connections are not what is measured.
    await pool(20, 5, trivial);
    await pool(20, 5, alert(1));

    const table: string[] = [];
    for (const concurrency of LEVELS) {
      const samples = new Map<string, Sample[]>();
      for (let round = 1; round <= ROUNDS; round++) {
        for (const [name, run] of Object.entries(paths)) {
          const count = countAt(concurrency);
          console.error(`${concurrency} at a time, round ${round}/${ROUNDS}: ${count} × ${name}…`);
          const { latencies, seconds } = await pool(count, concurrency, run);
          samples.set(name, [
            ...(samples.get(name) ?? []),
            { perSecond: count / seconds, p50: pct(latencies, 50), p99: pct(latencies, 99) },
          ]);
        }
      }
      const median = (name: string) => {
        const runs = [...samples.get(name)!].sort((a, b) => a.perSecond - b.perSecond);
        return runs[Math.floor(runs.length / 2)]!;
      };
      const base = median('trivial workflow (baseline)');
      for (const name of Object.keys(paths)) {
        const s = median(name);
        table.push(
          `| ${concurrency} | ${name} | ${s.perSecond.toFixed(1)} | ${s.p50.toFixed(0)} | ${s.p99.toFixed(0)} | ${((s.perSecond / base.perSecond) * 100).toFixed(0)} % | ${(s.p50 / base.p50).toFixed(2)}× |`,
        );
      }
    }
    const load = loadavg().map((l) => l.toFixed(2));
    const tuning = ['WORKER_ACTIVITY_SLOTS', 'WORKER_WORKFLOW_TASK_SLOTS', 'WORKER_POLLERS']
      .map((name) => `${name}=${process.env[name] ?? 'default'}`)
      .join(', ');
    console.log(
      `\nDev server ${values.untuned ? 'untuned' : 'tuned'}; ${tuning}; median of ${ROUNDS} rounds; load average ${load.join(' ')}\n`,
    );
    console.log(
      '| Concurrent | Path | workflows/s | p50 ms | p99 ms | throughput vs trivial | p50 vs trivial |',
    );
    console.log('| ---: | --- | ---: | ---: | ---: | ---: | ---: |');
    for (const row of table) console.log(row);
  } finally {
    await temporal.close();
    await worker.stop();
    await client.close();
    await receiver.stop();
    await server.stop();
    await mongo.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
