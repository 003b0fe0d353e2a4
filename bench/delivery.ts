/**
 * End-to-end alert delivery: from starting the alert workflow to the receiver holding a request
 * whose signature verifies, with 1 and 3 generic-webhook channels, against direct HTTP delivery of
 * the same requests (no Temporal, no database) in the same run. A real worker process delivers to
 * a local HTTPS receiver that trusts a throw-away CA.
 *
 * The paths take turns round by round with the CPU per alert of every process
 * (bench/support/rounds.ts).
 *
 *   npm run bench:delivery -- [--alerts 100] [--concurrency 20] [--min-rounds 5] [--max-rounds 15]
 */
import { parseArgs } from 'node:util';
import { startAlert } from '../src/alerts/alert-workflows';
import { ChannelsRepository } from '../src/alerts/channels.repository';
import { channelRequest } from '../src/alerts/channel-requests';
import { postOnce } from '../src/alerts/http-delivery';
import { alertPayloadSchema } from '../src/alerts/payload';
import { verifyWebhookSignature } from '../src/alerts/webhook-signature';
import { connectMongo } from '../src/db/mongo';
import { createTemporal } from '../src/temporal/client';
import { tripwirePayload } from '../test/support/alerts';
import { pool } from './support/latency';
import { interleave, printComparison } from './support/rounds';
import { startWorkerStack } from './support/worker-stack';

const { values } = parseArgs({
  strict: false,
  options: {
    alerts: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '20' },
  },
});
const ALERTS = Number(values.alerts);
const CONCURRENCY = Number(values.concurrency);
const SECRET = 'benchmark-webhook-secret';

async function main(): Promise<void> {
  const stack = await startWorkerStack('delivery');
  const { receiver, env } = stack;
  const config = {
    TEMPORAL_ADDRESS: env.TEMPORAL_ADDRESS,
    TEMPORAL_NAMESPACE: env.TEMPORAL_NAMESPACE,
    TEMPORAL_TASK_QUEUE: env.TEMPORAL_TASK_QUEUE,
  };
  const { client, db } = await connectMongo(env.MONGODB_URI, env.MONGODB_DB);
  const temporal = createTemporal(config);
  try {
    await stack.ready();
    const channels = new ChannelsRepository(db);
    const accounts: Record<number, string> = {};
    for (const n of [1, 3]) {
      accounts[n] = `usr_bench_${n}`;
      for (let c = 0; c < n; c++) {
        await channels.create(
          {
            accountId: accounts[n],
            kind: 'webhook',
            name: `c${c}`,
            url: receiver.url(`/a${n}/c${c}`),
            secret: SECRET,
          },
          new Date(),
        );
      }
    }

    /** Resolves when `expected` verified requests for this threat event have arrived. */
    const received = (threatEventId: string, expected: number) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          const hits = receiver.hits.filter((h) =>
            String(h.headers['x-service-delivery']).startsWith(`alert-${threatEventId}:`),
          );
          const verified = hits.filter(
            (h) =>
              verifyWebhookSignature(SECRET, {
                rawBody: h.rawBody,
                timestamp: h.headers['x-service-timestamp'] as string,
                signature: h.headers['x-service-signature'] as string,
              }).ok,
          );
          if (verified.length >= expected) return resolve();
          if (hits.length > verified.length)
            return reject(new Error('a request failed verification'));
          setTimeout(check, 2);
        };
        check();
      });

    const direct = (n: number) => async (i: number) => {
      const started = performance.now();
      await Promise.all(
        Array.from({ length: n }, async (_, c) => {
          const { body, headers } = channelRequest(
            { kind: 'webhook', secret: SECRET },
            alertPayloadSchema.parse(tripwirePayload(`direct_${i}`)),
            `direct-${i}-${c}`,
            new Date(),
          );
          const target = {
            url: new URL(receiver.url(`/direct/${n}/${c}`)),
            address: '127.0.0.1',
            family: 4 as const,
          };
          await postOnce(target, body, headers);
        }),
      );
      return performance.now() - started;
    };
    let run = 0;
    /** The alerts of the current run, whose records are still being written after delivery. */
    let running: Promise<unknown>[] = [];
    const throughTemporal = (n: number) => async (i: number) => {
      const threatEventId = `thr_${n}_${run}_${i}_${Date.now()}`;
      const started = performance.now();
      const handle = await startAlert(temporal, {
        accountId: accounts[n]!,
        payload: tripwirePayload(threatEventId),
        threatEventId,
      });
      running.push(handle.result());
      await received(threatEventId, n);
      return performance.now() - started;
    };
    // The rate and latencies are the deliveries'; the run ends once the alerts have ended, so the
    // CPU of their records counts in it and not in the next run.
    const variant = (task: (i: number) => Promise<number>) => async () => {
      run++;
      const timed = await pool(ALERTS, CONCURRENCY, task);
      await Promise.all(running);
      running = [];
      return { ops: ALERTS, ...timed };
    };
    // This process is the client of both paths and, for the direct one, the sender too.
    const cpu = stack.cpu({ client: process.pid });
    printComparison(
      `${ALERTS} alerts a round, ${CONCURRENCY} at a time`,
      await interleave(
        {
          'direct HTTP, 1 channel (baseline)': variant(direct(1)),
          'Temporal workflow, 1 channel': variant(throughTemporal(1)),
          'direct HTTP, 3 channels': variant(direct(3)),
          'Temporal workflow, 3 channels': variant(throughTemporal(3)),
        },
        cpu,
      ),
    );
  } finally {
    await temporal.close();
    await client.close();
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
