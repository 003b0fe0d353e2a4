/**
 * End-to-end alert delivery: from starting the alert workflow to the receiver holding a request
 * whose signature verifies, with 1 and 3 generic-webhook channels, against direct HTTP delivery of
 * the same requests (no Temporal, no database) in the same run. A real worker process delivers to
 * a local HTTPS receiver that trusts a throw-away CA.
 *
 *   npm run bench:delivery -- [--alerts 200] [--concurrency 20]
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
import { pct, pool } from './support/latency';
import { startWorkerStack } from './support/worker-stack';

const { values } = parseArgs({
  options: {
    alerts: { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '20' },
  },
});
const ALERTS = Number(values.alerts);
const CONCURRENCY = Number(values.concurrency);
const SECRET = 'benchmark-webhook-secret';

type Run = Awaited<ReturnType<typeof pool>>;

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

    const rows: [string, Run][] = [];
    for (const n of [1, 3]) {
      console.error(`${ALERTS} alerts through Temporal to ${n} channel(s)…`);
      rows.push([
        `Temporal workflow, ${n} channel${n > 1 ? 's' : ''}`,
        await pool(ALERTS, CONCURRENCY, async (i) => {
          const threatEventId = `thr_${n}_${i}_${Date.now()}`;
          const started = performance.now();
          await startAlert(temporal, {
            accountId: accounts[n]!,
            payload: tripwirePayload(threatEventId),
            threatEventId,
          });
          await received(threatEventId, n);
          return performance.now() - started;
        }),
      ]);
      console.error(`${ALERTS} direct deliveries to ${n} channel(s)…`);
      rows.push([
        `direct HTTP, ${n} channel${n > 1 ? 's' : ''} (baseline)`,
        await pool(ALERTS, CONCURRENCY, async (i) => {
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
        }),
      ]);
    }

    console.log(`\n${ALERTS} alerts, ${CONCURRENCY} at a time\n`);
    console.log('| Path | alerts/s | p50 ms | p95 ms | p99 ms |');
    console.log('|---|---:|---:|---:|---:|');
    for (const [name, run] of rows) {
      const l = run.latencies;
      console.log(
        `| ${name} | ${(ALERTS / run.seconds).toFixed(0)} | ${pct(l, 50).toFixed(0)} | ${pct(l, 95).toFixed(0)} | ${pct(l, 99).toFixed(0)} |`,
      );
    }
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
