/**
 * Whether a tripwire answer gives a canary away by its timing, now that every presented token is
 * journaled before the answer: canary tokens and unknown tokens fetched interleaved in one run
 * (each request a coin toss, so both see the same load), their latency distributions side by
 * side; and what a journal append costs on its own (write + fdatasync, group-committed) on the
 * disk of TRIPWIRE_JOURNAL_DIR.
 *
 *   npm run bench:tripwire-timing -- [--requests 2000] [--concurrency 10] [--appends 2000]
 *     [--kind url|fast_redirect|web_image]   (the route measured: /r/, /f/ or /i/)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { HitJournal } from '../src/canaries/hit-journal';
import { pct, pool } from './support/latency';
import { startWorkerStack } from './support/worker-stack';
import { startInProcessApi } from './support/in-process-api';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '10' },
    appends: { type: 'string', default: '2000' },
    kind: { type: 'string', default: 'url' },
  },
});
const REQUESTS = Number(values.requests);
const CONCURRENCY = Number(values.concurrency);
const APPENDS = Number(values.appends);
/** The kinds whose tripwire routes answer a live token after one more read than the lookup. */
const KIND_OPTIONS: Record<string, object> = {
  url: {},
  fast_redirect: { redirect_url: 'https://intranet.example/' },
  web_image: {},
};
if (!(values.kind in KIND_OPTIONS))
  throw new Error(`--kind: one of ${Object.keys(KIND_OPTIONS).join(', ')}`);

async function journalCost(dir: string) {
  const folder = await mkdtemp(join(dir, 'bench-'));
  const timings = { rotateMs: 5_000, replayMs: 60_000, staleMs: 10_000 };
  const journal = new HitJournal(
    { dir: folder, ...timings },
    () => Promise.resolve(),
    pino({ level: 'silent' }),
  );
  const entry = (i: number) => ({ id: `hit_${i}`, at: new Date().toISOString(), digests: ['x'] });
  const run = (concurrency: number) =>
    pool(APPENDS, concurrency, async (i) => {
      const started = performance.now();
      (await journal.append(entry(i))).settle(true);
      return performance.now() - started;
    });
  const one = await run(1);
  const ten = await run(CONCURRENCY);
  await journal.stop();
  await rm(folder, { recursive: true, force: true });
  return { one, ten };
}

async function main(): Promise<void> {
  const stack = await startWorkerStack('tripwire-timing', { TRUST_PROXY: 'loopback' });
  const inProcess = await startInProcessApi(stack.env);
  const { config, api, base } = inProcess;
  const call = async (path: string, body: object, token?: string) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token ?? ''}` },
      body: JSON.stringify(body),
    });
    if (res.status >= 400) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  try {
    await stack.ready();
    const who = { email: `bench-${Date.now()}@example.com`, password: 'benchmark password 123' };
    await call('/api/auth/signup', who);
    const { token } = (await call('/api/auth/login', who)) as { token: string };
    const canaries: string[] = [];
    for (let i = 0; i < 10; i++) {
      const planted = await call(
        '/api/canaries',
        { kind: values.kind, memo: `bench ${i}`, ...KIND_OPTIONS[values.kind] },
        token,
      );
      canaries.push(new URL(planted.value as string).pathname);
    }

    console.error(`${REQUESTS} requests, canary or unknown at random, ${CONCURRENCY} at a time…`);
    const times = { canary: [] as number[], unknown: [] as number[] };
    await pool(REQUESTS, CONCURRENCY, async (i) => {
      const canary = Math.random() < 0.5;
      const live = canaries[i % canaries.length]!;
      const path = canary ? live : live.replace(/[^/]+$/, `not-a-tripwire-${i}`);
      const started = performance.now();
      const res = await fetch(`${base}${path}`, {
        headers: { 'x-forwarded-for': `203.0.113.${i % 5}` },
        redirect: 'manual',
      });
      await res.arrayBuffer();
      const ms = performance.now() - started;
      times[canary ? 'canary' : 'unknown'].push(ms);
      return ms;
    });
    await api.tripwires.flush();
    const cost = await journalCost(config.TRIPWIRE_JOURNAL_DIR);

    console.log(
      `\n${REQUESTS} ${values.kind} tripwire requests interleaved, ${CONCURRENCY} at a time\n`,
    );
    console.log('| Token | requests | p50 ms | p90 ms | p99 ms |');
    console.log('|---|---:|---:|---:|---:|');
    const row = (name: string, ms: number[]) => {
      ms.sort((a, b) => a - b);
      console.log(
        `| ${name} | ${ms.length} | ${pct(ms, 50).toFixed(1)} | ${pct(ms, 90).toFixed(1)} | ${pct(ms, 99).toFixed(1)} |`,
      );
    };
    row('unknown (baseline)', times.unknown);
    row('canary', times.canary);
    const ratio = (p: number) => pct(times.canary, p) / pct(times.unknown, p);
    console.log(
      `\ncanary / unknown: p50 ${(ratio(50) * 100).toFixed(0)} %, p99 ${(ratio(99) * 100).toFixed(0)} %`,
    );
    console.log(
      `\nJournal append (write + fdatasync), ${APPENDS} entries in ${config.TRIPWIRE_JOURNAL_DIR}\n`,
    );
    console.log('| appends at once | appends/s | p50 ms | p99 ms |');
    console.log('|---:|---:|---:|---:|');
    for (const [n, run] of [
      [1, cost.one],
      [CONCURRENCY, cost.ten],
    ] as const) {
      console.log(
        `| ${n} | ${(APPENDS / run.seconds).toFixed(0)} | ${pct(run.latencies, 50).toFixed(2)} | ${pct(run.latencies, 99).toFixed(2)} |`,
      );
    }
  } finally {
    await inProcess.stop();
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
