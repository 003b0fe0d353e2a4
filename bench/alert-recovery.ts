/**
 * What alerts waiting in recovery cost the engine: alert throughput to a live receiver, and the CPU
 * of the Temporal server, the worker and the database per alert (from /proc), with no alert in
 * recovery (the baseline) against N alerts parked on their durable recovery timers to a receiver
 * that is down. The variants take turns round by round until resolved (bench/support/rounds.ts):
 * baseline, park N, measure, end the parked alerts, baseline again, and so on; the parking and the
 * ending are outside what is measured. Before each measurement the variant sits idle for a while,
 * to show what the parked alerts cost when nothing else happens (a second table, with memory).
 *
 *   npm run bench:alert-recovery -- [--parked 1000] [--alerts 200] [--concurrency 20] [--idle 10]
 *                                    [--min-rounds 5] [--max-rounds 15]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { startAlert } from '../src/alerts/alert-workflows';
import { ChannelsRepository } from '../src/alerts/channels.repository';
import { deliveriesIndexes } from '../src/alerts/deliveries.repository';
import { connectMongo } from '../src/db/mongo';
import { createTemporal } from '../src/temporal/client';
import { tripwirePayload } from '../test/support/alerts';
import { freePort } from '../tools/stack';
import { deltaBetween, type Part } from './support/cpu';
import { pool } from './support/latency';
import { interleave, median, printComparison } from './support/rounds';
import { startWorkerStack } from './support/worker-stack';

const { values } = parseArgs({
  options: {
    parked: { type: 'string', default: '1000' },
    alerts: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '20' },
    idle: { type: 'string', default: '10' },
  },
  allowPositionals: true,
  strict: false,
});
const PARKED = Number(values.parked);
const ALERTS = Number(values.alerts);
const CONCURRENCY = Number(values.concurrency);
const IDLE_SECONDS = Number(values.idle);
/** The parked alerts' one recovery pause: far longer than the run, so they wait all along. */
const PARKED_PAUSE_MS = 6 * 3_600_000;
const PARTS = ['temporal', 'worker', 'database'] as const;
const SECRET = 'benchmark-webhook-secret';

/** What a variant's idle waits showed, round by round. */
interface Idle {
  /** CPU while idle, in % of one core, by part. */
  cpu: Map<Part, number>[];
  rssMb: Map<Part, number>[];
  open: number[];
}

const fmt = (n: number, digits = 1) => n.toFixed(digits);

async function main(): Promise<void> {
  const stack = await startWorkerStack('alert-recovery');
  const { receiver, env } = stack;
  const { client, db } = await connectMongo(env.MONGODB_URI, env.MONGODB_DB);
  const config = {
    TEMPORAL_ADDRESS: env.TEMPORAL_ADDRESS,
    TEMPORAL_NAMESPACE: env.TEMPORAL_NAMESPACE,
    TEMPORAL_TASK_QUEUE: env.TEMPORAL_TASK_QUEUE,
  };
  // Live alerts are delivered at once and never recover; parked ones wait on one long pause.
  const temporal = createTemporal(config);
  const recovering = createTemporal({ ...config, ALERT_RECOVERY_SCHEDULE: [PARKED_PAUSE_MS] });
  // The API is not running: this process only drives the load.
  const meter = stack.cpu({ client: process.pid });
  try {
    await stack.ready();
    const channels = new ChannelsRepository(db);
    const live = 'usr_bench_live';
    await channels.create(
      {
        accountId: live,
        kind: 'webhook',
        name: 'live',
        url: receiver.url('/live'),
        secret: SECRET,
      },
      new Date(),
    );
    // A port nothing listens on: every attempt is refused at once, as by a receiver that is down.
    const deadUrl = `https://127.0.0.1:${await freePort()}/dead`;
    const deliveries = db.collection(deliveriesIndexes.collection);

    const liveAlert = async () => {
      const threatEventId = `thr_live_${randomUUID()}`;
      const started = performance.now();
      const handle = await startAlert(temporal, {
        accountId: live,
        payload: tripwirePayload(threatEventId),
        threatEventId,
      });
      const { results } = await handle.result();
      if (results[0]?.outcome !== 'delivered') throw new Error(`${threatEventId}: not delivered`);
      return performance.now() - started;
    };
    const openAlerts = () =>
      temporal.client.workflow.count(
        `WorkflowType = 'alertWorkflow' AND ExecutionStatus = 'Running'`,
      );

    /** N alerts to the dead channel, each waiting on its recovery timer once its first round failed. */
    const park = async (round: number): Promise<WorkflowHandle[]> => {
      const accountId = `usr_bench_dead_${round}`;
      await channels.create(
        { accountId, kind: 'webhook', name: 'dead', url: deadUrl, secret: SECRET },
        new Date(),
      );
      const handles: WorkflowHandle[] = [];
      const started = performance.now();
      await pool(PARKED, 50, async (i) => {
        const threatEventId = `thr_parked_${round}_${i}_${randomUUID()}`;
        handles.push(
          await startAlert(recovering, {
            accountId,
            payload: tripwirePayload(threatEventId),
            threatEventId,
          }),
        );
        return 0;
      });
      // Parked: its first delivery failed (3 attempts) and was recorded; the timer comes next.
      while ((await deliveries.countDocuments({ accountId, outcome: 'failed' })) < PARKED) {
        await new Promise((r) => setTimeout(r, 1_000));
      }
      console.error(
        `  parked ${PARKED} alerts in ${fmt((performance.now() - started) / 1000)} s (open: ${(await openAlerts()).count})`,
      );
      return handles;
    };

    /** The variant's idle wait: its open workflows, CPU and memory, outside the measured run. */
    const idleWait = async (idle: Idle) => {
      idle.open.push((await openAlerts()).count);
      const before = meter.read();
      await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
      const spent = deltaBetween(before, meter.read());
      idle.cpu.push(new Map([...spent].map(([part, s]) => [part, (s * 100) / IDLE_SECONDS])));
      idle.rssMb.push(meter.rssMb());
    };
    const alerts = async () => {
      const run = await pool(ALERTS, CONCURRENCY, liveAlert);
      return { ops: ALERTS, latencies: run.latencies };
    };

    // Warm-up: the worker's first workflow tasks and connections are not what is measured.
    await pool(20, 5, liveAlert);

    const idles = new Map<string, Idle>();
    const idleOf = (name: string) => {
      const idle: Idle = { cpu: [], rssMb: [], open: [] };
      idles.set(name, idle);
      return idle;
    };
    const baseline = idleOf('0 in recovery (baseline)');
    const parkedIdle = idleOf(`${PARKED} in recovery`);
    let round = 0;
    let parked: WorkflowHandle[] = [];
    const comparison = await interleave(
      {
        '0 in recovery (baseline)': { prepare: () => idleWait(baseline), run: alerts },
        [`${PARKED} in recovery`]: {
          prepare: async () => {
            parked = await park(++round);
            await idleWait(parkedIdle);
          },
          run: alerts,
          finish: async () => {
            await pool(parked.length, 50, async (i) => {
              await parked[i]!.terminate('benchmark round over');
              return 0;
            });
            // The list the count reads catches up a moment after the terminations.
            for (let i = 0; i < 60 && (await openAlerts()).count > 0; i++) {
              await new Promise((r) => setTimeout(r, 500));
            }
          },
        },
      },
      meter,
    );
    printComparison(
      `${ALERTS} alerts to a live receiver a round, ${CONCURRENCY} at a time, with none in recovery and with ${PARKED} parked on a ${PARKED_PAUSE_MS / 3_600_000} h recovery timer to a refused port (parking them and ending them are outside the measured runs)`,
      comparison,
    );
    console.log(
      `\n> The same variants idle for ${IDLE_SECONDS} s before each run: open workflows, CPU in % of a core and resident memory by part (medians over the rounds)\n`,
    );
    console.log(
      `| Variant | open workflows | ${PARTS.map((p) => `${p} idle CPU %`).join(' | ')} | ${PARTS.map((p) => `${p} RSS MB`).join(' | ')} |`,
    );
    console.log(`|---|---:|${'---:|'.repeat(2 * PARTS.length)}`);
    for (const [name, idle] of idles) {
      const cells = (ms: Map<Part, number>[], digits: number) =>
        PARTS.map((p) => fmt(median(ms.map((m) => m.get(p) ?? 0)), digits)).join(' | ');
      console.log(
        `| ${name} | ${median(idle.open)} | ${cells(idle.cpu, 1)} | ${cells(idle.rssMb, 0)} |`,
      );
    }
  } finally {
    await recovering.close();
    await temporal.close();
    await client.close();
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
