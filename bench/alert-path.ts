/**
 * The alert path against the engine's floor: alerts per second, latency and CPU per workflow in
 * every process (API client, worker, Temporal dev server, database) of the alert workflow (one
 * webhook channel, and three, to an HTTPS endpoint in a process of its own, not counted), each
 * from its start to its result (delivered and recorded), against a workflow with one no-op local
 * activity (the floor, one workflow task: the baseline), one with
 * one no-op activity (two workflow tasks), and the floor started, carried and ended as a
 * delivered alert (its input, memo and search attributes: the engine's share of an alert without
 * its work), on the same dev server and worker, at 1, 10 and 50 concurrent
 * workflows. The variants take turns round by round until their ratios are resolved
 * (bench/support/rounds.ts), after a warm-up that leaves every process's code compiled, and each
 * run ends once the database is back at rest (bench/support/warm-up.ts). The unconfigured
 * built-in channels (email, chat) are part of every alert, as on a fresh deployment.
 *
 *   npm run bench:alert-path -- [--levels 1,10,50] [--untuned] [--min-rounds 5] [--max-rounds 30]
 *
 * Up to 30 rounds a level by default (15 elsewhere): on the shared 2-core machine, with the floor
 * run between every two other variants, one run at 10 at a time resolved its ratios to ±10 % in 23
 * rounds and the next had not in 25 (one-channel CPU 1.28× and 1.36×). A level takes 20–40 minutes.
 *
 * `--untuned` starts the dev server without `DEV_SERVER_TUNING` (tools/stack.ts), to measure it.
 * Worker tuning comes from the environment (`WORKER_ACTIVITY_SLOTS`, …), as in `bench:workers`;
 * `BENCH_WORKER_NODE_FLAGS="--cpu-prof --cpu-prof-dir=…"` profiles the worker.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { Db } from 'mongodb';
import { alertStartOptions, startAlert } from '../src/alerts/alert-workflows';
import { ChannelsRepository } from '../src/alerts/channels.repository';
import { stormEventId } from '../src/canaries/threats.repository';
import { connectMongo } from '../src/db/mongo';
import { createTemporal } from '../src/temporal/client';
import { tripwirePayload } from '../test/support/alerts';
import type { floorWorkflow } from '../workflows';
import type { ReadyAlertInput } from '../workflows/shared';
import { pool } from './support/latency';
import { interleave, printComparison, roundOptionsWith, type Variant } from './support/rounds';
import { databaseSettler, warmUp } from './support/warm-up';
import { commandCounts, storeStatus } from './support/store-status';
import { startWorkerStack } from './support/worker-stack';
import { deltaBetween, threadSeconds } from './support/cpu';

const { values } = parseArgs({
  options: {
    levels: { type: 'string', default: '1,10,50' },
    untuned: { type: 'boolean', default: false },
  },
  strict: false,
});
const LEVELS = String(values.levels).split(',').map(Number);
const rounds = roundOptionsWith({ maxRounds: 30 });
/**
 * Enough workflows per round that a level's steady state dominates its ramp-up (ten waves), and
 * that a run's few seconds outweigh the settling wait after it (2.75 s at least): at least 200.
 */
const countAt = (concurrency: number) => Math.max(200, concurrency * 10);

async function main(): Promise<void> {
  const stack = await startWorkerStack('alert-path', {}, { tuned: !values.untuned });
  const { env } = stack;
  const { client, db } = await connectMongo(env.MONGODB_URI, env.MONGODB_DB);
  const temporal = createTemporal(env);
  try {
    await stack.ready();
    // The customer's side: its CPU is not the alert's (issue 37 counts Temporal, the worker and
    // the database, and here the client that starts the workflows too).
    const endpoint = await stack.endpoint();
    const channels = new ChannelsRepository(db);
    const accounts = { 1: 'usr_bench_one', 3: 'usr_bench_three' } as const;
    for (const [n, accountId] of Object.entries(accounts)) {
      for (let c = 0; c < Number(n); c++) {
        await channels.create(
          {
            accountId,
            kind: 'webhook',
            name: `c${c}`,
            url: endpoint.url(`/a${n}/c${c}`),
            secret: 'benchmark-webhook-secret',
          },
          new Date(),
        );
      }
    }

    const floor = (local: boolean) => async () => {
      const started = performance.now();
      await temporal.client.workflow.execute<typeof floorWorkflow>('floorWorkflow', {
        taskQueue: temporal.taskQueue,
        workflowId: `bench-floor-${randomUUID()}`,
        args: [{ local }],
      });
      return performance.now() - started;
    };
    /** The floor started, carried and ended as a one-channel alert is, without its work. */
    const floorAsAlert = async () => {
      const threatEventId = stormEventId(`bench|${randomUUID()}`, new Date());
      const input: ReadyAlertInput = {
        kind: 'ready',
        accountId: accounts[1],
        payload: tripwirePayload(threatEventId),
        recoveryMs: temporal.alertRecoveryMs,
      };
      const started = performance.now();
      await temporal.client.workflow.execute<typeof floorWorkflow>('floorWorkflow', {
        ...alertStartOptions(temporal, `bench-floor-${threatEventId}`, input),
        args: [{ local: true, asAlert: input }],
      });
      return performance.now() - started;
    };
    const alert = (channelCount: 1 | 3) => async () => {
      // Named as a tripwire's storm names its event: its delivery records and sealed outcomes are
      // then ordered as the service's are.
      const threatEventId = stormEventId(`bench|${randomUUID()}`, new Date());
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
      'one no-op local activity (floor, baseline)': floor(true),
      'one no-op activity': floor(false),
      'one no-op local activity, as an alert': floorAsAlert,
      'alert, 1 channel': alert(1),
      'alert, 3 channels': alert(3),
    };

    // Warm-up: compiled code and open connections in every process, as a running service has them.
    const warmed = await warmUp(async () => {
      for (const [name, run] of Object.entries(paths)) {
        await pool(name.startsWith('alert') ? 100 : 20, 10, run);
      }
    }, stack.databasePid);
    // The benchmark process is the API's client here: it starts and awaits the workflows.
    const cpu = stack.cpu({ client: process.pid });
    const database = await databaseSettler(stack.databasePid, cpu);
    console.log(
      `> ${warmed}; each run ends once the database is back at rest (${database.restMs.toFixed(0)} ms of CPU per 2.5 s), and what the stack spends at rest meanwhile is not counted`,
    );
    for (const concurrency of LEVELS) {
      const count = countAt(concurrency);
      const variants = Object.fromEntries(
        Object.entries(paths).map(([name, run]): [string, Variant] => [
          name,
          async () => ({ ops: count, ...(await pool(count, concurrency, run)) }),
        ]),
      );
      const tuning = ['WORKER_ACTIVITY_SLOTS', 'WORKER_WORKFLOW_TASK_SLOTS', 'WORKER_POLLERS']
        .map((name) => `${name}=${process.env[name] ?? 'default'}`)
        .join(', ');
      printComparison(
        `${concurrency} at a time, ${count} workflows a round; dev server ${values.untuned ? 'untuned' : 'tuned'}; ${tuning}`,
        await interleave(variants, cpu, { ...rounds, settle: database.settled }),
      );
    }

    await breakdown(paths, stack.workerPid, db, database.settled);
  } finally {
    await temporal.close();
    await client.close();
    await stack.stop();
  }
}

/**
 * Each variant once more, 200 workflows 10 at a time to the database's rest, taken apart: the
 * database's own count of synced (journaled) commits, each an fsync of its file, its commands on
 * each collection (`top`: the round trips a workflow makes, fewer than its writes where concurrent
 * workflows share one, as the evidence log's appends do), and where the worker's CPU goes, by
 * thread. The main thread runs the activities and the SDK's side of every task, `WorkerThread` the
 * workflow sandbox, `workflow-proces` and `tokio-runtime-w` the SDK's core (its workflow state
 * machines, its calls to Temporal), `V8Worker` the garbage collector's and compiler's helpers. One
 * pass, not interleaved rounds: a breakdown, not a comparison.
 */
async function breakdown(
  paths: Record<string, () => Promise<number>>,
  workerPid: number,
  db: Db,
  settled: () => Promise<unknown>,
): Promise<void> {
  const count = 200;
  const database = async () => ({
    syncs: (await storeStatus(db))?.syncs,
    commands: await commandCounts(db),
  });
  const rows: {
    name: string;
    syncs?: number;
    commands?: Map<string, number>;
    threads: Map<string, number>;
  }[] = [];
  for (const [name, run] of Object.entries(paths)) {
    const [before, threadsBefore] = [await database(), threadSeconds(workerPid)];
    await pool(count, 10, run);
    await settled();
    const [after, threadsAfter] = [await database(), threadSeconds(workerPid)];
    rows.push({
      name,
      syncs: after.syncs === undefined ? undefined : (after.syncs - before.syncs!) / count,
      commands:
        after.commands &&
        new Map(
          [...deltaBetween(before.commands ?? new Map<string, number>(), after.commands)].map(
            ([key, n]) => [key, n / count],
          ),
        ),
      threads: deltaBetween(threadsBefore, threadsAfter),
    });
  }
  console.log(
    '\n| Variant | database syncs per workflow | database commands per workflow | by kind and collection |\n|---|---:|---:|---|',
  );
  for (const row of rows) {
    const commands = [...(row.commands ?? [])]
      .filter(([, n]) => n >= 0.01)
      .sort((a, b) => b[1] - a[1]);
    const total = commands.reduce((sum, [, n]) => sum + n, 0);
    const byKind = commands.map(([key, n]) => `${n.toFixed(2)} ${key}`).join(', ');
    const counted = row.commands ? [total.toFixed(2), byKind || 'none'] : ['not reported', ''];
    console.log(
      `| ${row.name} | ${row.syncs?.toFixed(1) ?? 'not reported'} | ${counted.join(' | ')} |`,
    );
  }
  const threads = [...new Set(rows.flatMap((row) => [...row.threads.keys()]))]
    .filter((t) => rows.some((row) => (row.threads.get(t) ?? 0) * 1000 >= count * 0.05))
    .sort((a, b) => (rows[0]!.threads.get(b) ?? 0) - (rows[0]!.threads.get(a) ?? 0));
  console.log(`\n| Variant | worker CPU ms per workflow: ${threads.join(' / ')} |\n|---|---|`);
  for (const row of rows) {
    const ms = threads.map((t) => (((row.threads.get(t) ?? 0) * 1000) / count).toFixed(2));
    console.log(`| ${row.name} | ${ms.join(' / ')} |`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
