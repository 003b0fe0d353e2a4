/**
 * What alerts waiting in recovery cost the engine: alert throughput to a live receiver, and the CPU
 * of the Temporal server, the worker and the database per alert (from /proc), with no alert in
 * recovery (the baseline) against N alerts parked on their durable recovery timers to a receiver
 * that is down. The variants take turns round by round, in one run: baseline, park N, measure,
 * end the parked alerts, baseline again, and so on. Each variant also sits idle for a while, to
 * show what the parked alerts cost when nothing else happens.
 *
 *   npm run bench:alert-recovery -- [--parked 1000] [--alerts 200] [--concurrency 20]
 *                                    [--rounds 2] [--idle 10]
 */
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import { startAlert } from '../src/alerts/alert-workflows';
import { ChannelsRepository } from '../src/alerts/channels.repository';
import { deliveriesIndexes } from '../src/alerts/deliveries.repository';
import { connectMongo } from '../src/db/mongo';
import { createTemporal } from '../src/temporal/client';
import { tripwirePayload } from '../test/support/alerts';
import { freePort } from '../tools/stack';
import { cpuBetween, type Part } from './support/cpu';
import { pct, pool } from './support/latency';
import { startWorkerStack } from './support/worker-stack';

const { values } = parseArgs({
  options: {
    parked: { type: 'string', default: '1000' },
    alerts: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '2' },
    idle: { type: 'string', default: '10' },
  },
});
const PARKED = Number(values.parked);
const ALERTS = Number(values.alerts);
const CONCURRENCY = Number(values.concurrency);
const ROUNDS = Number(values.rounds);
const IDLE_SECONDS = Number(values.idle);
/** The parked alerts' one recovery pause: far longer than the run, so they wait all along. */
const PARKED_PAUSE_MS = 6 * 3_600_000;
const PARTS = ['temporal', 'worker', 'database'] as const;
const SECRET = 'benchmark-webhook-secret';

interface Sample {
  variant: string;
  round: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** CPU ms per alert, by part of the stack. */
  cpuPerAlert: Map<Part, number>;
  /** CPU while idle, in % of one core, by part. */
  idleCpu: Map<Part, number>;
  rssMb: Map<Part, number>;
  open: number;
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return Number.isInteger(mid) ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[Math.floor(mid)]!;
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
  const loadBefore = loadavg();
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

    const measure = async (variant: string, round: number): Promise<Sample> => {
      const open = (await openAlerts()).count;
      const idleBefore = meter.read();
      await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
      const idle = cpuBetween(idleBefore, meter.read());
      const rssMb = meter.rssMb();
      const before = meter.read();
      const run = await pool(ALERTS, CONCURRENCY, liveAlert);
      const cpu = cpuBetween(before, meter.read());
      const sample = {
        variant,
        round,
        perSecond: ALERTS / run.seconds,
        p50: pct(run.latencies, 50),
        p99: pct(run.latencies, 99),
        cpuPerAlert: new Map([...cpu].map(([part, s]) => [part, (s * 1000) / ALERTS])),
        idleCpu: new Map([...idle].map(([part, s]) => [part, (s * 100) / IDLE_SECONDS])),
        rssMb,
        open,
      };
      console.error(
        `  ${variant}, round ${round}: ${fmt(sample.perSecond)} alerts/s, ${open} open workflows before`,
      );
      return sample;
    };

    // Warm-up: the worker's first workflow tasks and connections are not what is measured.
    await pool(20, 5, liveAlert);

    const samples: Sample[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      console.error(`round ${round} of ${ROUNDS}`);
      samples.push(await measure('0 in recovery (baseline)', round));
      const parked = await park(round);
      samples.push(await measure(`${PARKED} in recovery`, round));
      await pool(parked.length, 50, async (i) => {
        await parked[i]!.terminate('benchmark round over');
        return 0;
      });
      // The list the count reads catches up a moment after the terminations.
      for (let i = 0; i < 60 && (await openAlerts()).count > 0; i++) {
        await new Promise((r) => setTimeout(r, 500));
      }
    }

    const loadAfter = loadavg();
    console.log(
      `\n${ALERTS} alerts to a live receiver, ${CONCURRENCY} at a time, per variant and round; ` +
        `parked alerts wait on a ${PARKED_PAUSE_MS / 3_600_000} h recovery timer to a refused port. ` +
        `Load average ${loadBefore.map((l) => fmt(l, 2)).join(' ')} before, ${loadAfter.map((l) => fmt(l, 2)).join(' ')} after (${cpus().length} cores).\n`,
    );
    console.log(
      `| Variant | round | open workflows | alerts/s | p50 ms | p99 ms | ${PARTS.map((p) => `${p} CPU ms/alert`).join(' | ')} | ${PARTS.map((p) => `${p} idle CPU %`).join(' | ')} | ${PARTS.map((p) => `${p} RSS MB`).join(' | ')} |`,
    );
    console.log(
      `|---|---:|---:|---:|---:|---:|${PARTS.map(() => '---:|')
        .join('')
        .repeat(3)}`,
    );
    for (const s of samples) {
      const cells = (m: Map<Part, number>, digits: number) =>
        PARTS.map((p) => fmt(m.get(p) ?? 0, digits)).join(' | ');
      console.log(
        `| ${s.variant} | ${s.round} | ${s.open} | ${fmt(s.perSecond)} | ${fmt(s.p50, 0)} | ${fmt(s.p99, 0)} | ${cells(s.cpuPerAlert, 2)} | ${cells(s.idleCpu, 1)} | ${cells(s.rssMb, 0)} |`,
      );
    }
    const of = (variantStart: string, value: (s: Sample) => number) =>
      median(samples.filter((s) => s.variant.startsWith(variantStart)).map(value));
    const ratio = (value: (s: Sample) => number) =>
      fmt(of(`${PARKED} `, value) / of('0 ', value), 2);
    console.log(`\nRatios, ${PARKED} in recovery / baseline (medians over ${ROUNDS} rounds):`);
    console.log(`- throughput (alerts/s): ${ratio((s) => s.perSecond)}`);
    console.log(`- p50 latency: ${ratio((s) => s.p50)}`);
    for (const part of PARTS) {
      console.log(
        `- ${part} CPU per alert: ${ratio((s) => s.cpuPerAlert.get(part) ?? 0)}; idle CPU ${fmt(of('0 ', (s) => s.idleCpu.get(part) ?? 0))} % → ${fmt(of(`${PARKED} `, (s) => s.idleCpu.get(part) ?? 0))} % of a core`,
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
