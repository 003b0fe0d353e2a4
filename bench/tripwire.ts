/**
 * Tripwires end to end: a URL tripwire fetched over HTTP → the signed webhook at a local HTTPS
 * receiver (latency p50/p95/p99; the first hit of a storm is alerted at once), against a ready
 * alert started on the same stack and delivered to the same channel (the one-alert delivery, the
 * baseline of the ratio), and hits per second
 * sustained with every hit recorded and sealed, against the same route answering unknown tokens
 * (no hit to record) in the same run. The API runs in this process; a real worker process delivers.
 *
 *   npm run bench:tripwire -- [--alerts 50] [--hits 2000] [--concurrency 10] [--gather-ms 2000]
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { UsersRepository } from '../src/accounts/users.repository';
import { createApp } from '../src/app';
import { startAlert } from '../src/alerts/alert-workflows';
import { verifyWebhookSignature } from '../src/alerts/webhook-signature';
import { loadConfig } from '../src/config';
import { ALL_INDEXES } from '../src/db/indexes';
import { connectMongo, ensureIndexes } from '../src/db/mongo';
import { createTemporal } from '../src/temporal/client';
import { tripwirePayload } from '../test/support/alerts';
import type { Hit } from '../test/support/receiver';
import { cpuBetween, stackCpu } from './support/cpu';
import { pct, pool } from './support/latency';
import { startWorkerStack } from './support/worker-stack';

const { values } = parseArgs({
  options: {
    alerts: { type: 'string', default: '50' },
    hits: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '10' },
    'gather-ms': { type: 'string', default: '2000' },
  },
});
const ALERTS = Number(values.alerts);
const HITS = Number(values.hits);
const CONCURRENCY = Number(values.concurrency);
const SECRET = 'benchmark-webhook-secret';
const PASSWORD = 'benchmark password 123';

async function main(): Promise<void> {
  const stack = await startWorkerStack('tripwire', {
    ALERT_GATHER_MS: values['gather-ms'],
    TRUST_PROXY: 'loopback',
    COOKIE_SECURE: 'false',
  });
  const { receiver, env } = stack;
  const config = loadConfig(env);
  const db = await connectMongo(config.MONGODB_URI, config.MONGODB_DB);
  await ensureIndexes(db.db, ALL_INDEXES);
  const temporal = createTemporal(config);
  const api = createApp({ config, logger: pino({ level: 'warn' }), mongo: db, temporal });
  const server = api.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${base}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', ...init.headers },
    });
    if (res.status >= 400) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };

  try {
    await stack.ready();
    const email = `bench-${Date.now()}@example.com`;
    const body = JSON.stringify({ email, password: PASSWORD });
    const { user_id: userId } = await call('/api/auth/signup', { method: 'POST', body });
    await new UsersRepository(db.db).setPlan(userId as string, 'enterprise', new Date());
    const { token } = await call('/api/auth/login', { method: 'POST', body });
    const auth = { authorization: `Bearer ${token as string}` };
    await call('/api/alert-channels', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        kind: 'webhook',
        name: 'bench',
        url: receiver.url('/hook'),
        secret: SECRET,
      }),
    });
    type Planted = { id: string; path: string };
    const plant = async (): Promise<Planted> => {
      const canary = await call('/api/canaries', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ kind: 'url', platform: 'bench' }),
      });
      return { id: canary.canary_id as string, path: new URL(canary.value as string).pathname };
    };

    /** The delivery that `matches`, once it has arrived and its signature verifies. */
    const verified = async (matches: (hit: Hit) => boolean) => {
      const hit = await receiver.arrival((h) => h.path === '/hook' && matches(h));
      const { ok } = verifyWebhookSignature(SECRET, {
        rawBody: hit.rawBody,
        timestamp: hit.headers['x-service-timestamp'] as string,
        signature: hit.headers['x-service-signature'] as string,
      });
      if (!ok) throw new Error('a webhook failed verification');
    };
    /** A canary's alert: its payload names the canary. */
    const alerted = (canaryId: string) =>
      verified(
        (h) =>
          (JSON.parse(h.rawBody.toString()) as { data: { canaryId: string } }).data.canaryId ===
          canaryId,
      );
    /** A ready alert: its delivery id starts with its workflow id. */
    const delivered = (threatEventId: string) =>
      verified((h) =>
        String(h.headers['x-service-delivery']).startsWith(`alert-${threatEventId}:`),
      );
    const readyAlert = async (i: number) => {
      const threatEventId = `thr_ready_${i}_${Date.now()}`;
      const started = performance.now();
      await startAlert(temporal, {
        accountId: userId as string,
        payload: tripwirePayload(threatEventId),
        threatEventId,
      });
      await delivered(threatEventId);
      return performance.now() - started;
    };
    // Warm-up: the worker's first workflows and connections are not what is measured.
    await pool(10, 5, (i) => readyAlert(-1 - i));
    console.error(`${ALERTS} ready alerts delivered, ${CONCURRENCY} at a time (baseline)…`);
    const oneAlert = await pool(ALERTS, CONCURRENCY, readyAlert);

    console.error(`${ALERTS} tripwires fired once each, ${CONCURRENCY} at a time…`);
    const canaries: Planted[] = [];
    for (let i = 0; i < ALERTS; i++) canaries.push(await plant());
    const cpuBefore = stackCpu();
    const latency = await pool(ALERTS, CONCURRENCY, async (i) => {
      const started = performance.now();
      await fetch(`${base}${canaries[i]!.path}`, {
        headers: { 'x-forwarded-for': `198.51.100.${i % 250}` },
      });
      await alerted(canaries[i]!.id);
      return performance.now() - started;
    });
    const cpu = cpuBetween(cpuBefore, stackCpu());

    console.error(`${HITS} hits on 10 tripwires from 5 sources, ${CONCURRENCY} at a time…`);
    const targets: Planted[] = [];
    for (let i = 0; i < 10; i++) targets.push(await plant());
    const fire = (path: (i: number) => string) =>
      pool(HITS, CONCURRENCY, async (i) => {
        const started = performance.now();
        const res = await fetch(`${base}${path(i)}`, {
          headers: { 'x-forwarded-for': `203.0.113.${i % 5}` },
        });
        await res.arrayBuffer();
        return performance.now() - started;
      });
    const baseline = await fire((i) => `/r/not-a-tripwire-${i}`);
    const hitsColl = db.db.collection('threat_hits');
    const before = await hitsColl.countDocuments({ canaryId: { $in: targets.map((t) => t.id) } });
    const started = performance.now();
    const answered = await fire((i) => targets[i % targets.length]!.path);
    await api.tripwires.flush();
    const recordedSeconds = (performance.now() - started) / 1000;
    const recorded =
      (await hitsColl.countDocuments({ canaryId: { $in: targets.map((t) => t.id) } })) - before;
    const sealed = await db.db.collection('evidence').countDocuments({ kind: 'threat.hit' });

    console.log(
      `\nTripwire → verified webhook (ALERT_GATHER_MS=${values['gather-ms']}), ${ALERTS} alerts, ${CONCURRENCY} at a time\n`,
    );
    console.log('| Path | alerts/s | p50 ms | p95 ms | p99 ms | p50 vs one alert |');
    console.log('|---|---:|---:|---:|---:|---:|');
    const baseP50 = pct(oneAlert.latencies, 50);
    for (const [name, run] of [
      ['ready alert, start → webhook (baseline)', oneAlert],
      ['tripwire request → webhook', latency],
    ] as const) {
      const l = run.latencies;
      console.log(
        `| ${name} | ${(ALERTS / run.seconds).toFixed(1)} | ${pct(l, 50).toFixed(0)} | ${pct(l, 95).toFixed(0)} | ${pct(l, 99).toFixed(0)} | ${(pct(l, 50) / baseP50).toFixed(2)}× |`,
      );
    }
    // The stack's CPU per fired tripwire, by process: what sizing hosts for an alert rate needs.
    // `api` is this process, so it includes the benchmark's own client and receiver.
    console.log(`\nCPU per tripwire alert (request → signed webhook), ms\n`);
    console.log('| Process | CPU ms per alert |');
    console.log('|---|---:|');
    let total = 0;
    for (const [name, seconds] of [...cpu].sort((a, b) => b[1] - a[1])) {
      total += seconds;
      console.log(`| ${name} | ${((seconds / ALERTS) * 1000).toFixed(1)} |`);
    }
    console.log(`| all | ${((total / ALERTS) * 1000).toFixed(1)} |`);
    console.log(`\n${HITS} requests, ${CONCURRENCY} at a time\n`);
    console.log('| Path | requests/s | p50 ms | p99 ms | ratio |');
    console.log('|---|---:|---:|---:|---:|');
    const row = (name: string, run: typeof baseline, rate: number) =>
      console.log(
        `| ${name} | ${rate.toFixed(0)} | ${pct(run.latencies, 50).toFixed(1)} | ${pct(run.latencies, 99).toFixed(1)} | ${((rate / (HITS / baseline.seconds)) * 100).toFixed(0)} % |`,
      );
    row('unknown token (baseline)', baseline, HITS / baseline.seconds);
    row('tripwire hit, answered', answered, HITS / answered.seconds);
    row('tripwire hit, answered and recorded', answered, HITS / recordedSeconds);
    console.log(`\nrecorded ${recorded} of ${HITS} hits; ${sealed} sealed hit records in all`);
    if (recorded !== HITS) throw new Error(`lost ${HITS - recorded} hits`);
  } finally {
    server.close();
    await api.flush();
    await temporal.close();
    await db.client.close();
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
