/**
 * Whether a tripwire answer gives a canary away by its timing, now that every presented token is
 * journaled before the answer: a run is `--requests` requests, each a coin toss between a canary
 * and an unknown token (so both kinds meet the same load, the recording of the canary hits
 * included), and lasts until the hits are recorded; each round has two, one timing the unknown
 * tokens (the baseline), one the canaries, until resolved (bench/support/rounds.ts). Beside the
 * latencies, the CPU per request of the mix in every part of the stack (the API runs in this
 * process, beside the client);
 * and what a journal append costs on its own (write + fdatasync, group-committed) on the disk of
 * TRIPWIRE_JOURNAL_DIR, one at a time (the baseline) against `--concurrency` at once.
 *
 *   npm run bench:tripwire-timing -- [--requests 2000] [--concurrency 10] [--appends 5000]
 *     [--kind url|fast_redirect|web_image]   (the route measured: /r/, /f/ or /i/)
 *     [--min-rounds 5] [--max-rounds 15]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { HitJournal } from '../src/canaries/hit-journal';
import type { StackCpu } from './support/cpu';
import { pool } from './support/latency';
import { interleave, printComparison, roundOptions, type Variant } from './support/rounds';
import { startWorkerStack } from './support/worker-stack';
import { startInProcessApi } from './support/in-process-api';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '10' },
    appends: { type: 'string', default: '5000' },
    kind: { type: 'string', default: 'url' },
  },
  allowPositionals: true,
  strict: false,
});
const KIND = String(values.kind);
const REQUESTS = Number(values.requests);
const CONCURRENCY = Number(values.concurrency);
const APPENDS = Number(values.appends);
/** The kinds whose tripwire routes answer a live token after one more read than the lookup. */
const KIND_OPTIONS: Record<string, object> = {
  url: {},
  fast_redirect: { redirect_url: 'https://intranet.example/' },
  web_image: {},
};
if (!(KIND in KIND_OPTIONS))
  throw new Error(`--kind: one of ${Object.keys(KIND_OPTIONS).join(', ')}`);

async function journalCost(dir: string, cpu: StackCpu) {
  const folder = await mkdtemp(join(dir, 'bench-'));
  const timings = { rotateMs: 5_000, replayMs: 60_000, staleMs: 10_000 };
  const journal = new HitJournal(
    { dir: folder, ...timings },
    () => Promise.resolve(),
    pino({ level: 'silent' }),
  );
  let next = 0;
  const entry = (i: number) => ({ id: `hit_${i}`, at: new Date().toISOString(), digests: ['x'] });
  const appends = (concurrency: number) => async () => {
    const from = next;
    next += APPENDS;
    const run = await pool(APPENDS, concurrency, async (i) => {
      const started = performance.now();
      (await journal.append(entry(from + i))).settle(true);
      return performance.now() - started;
    });
    return { ops: APPENDS, latencies: run.latencies };
  };
  try {
    return await interleave(
      { '1 at a time (baseline)': appends(1), [`${CONCURRENCY} at once`]: appends(CONCURRENCY) },
      cpu,
    );
  } finally {
    await journal.stop();
    await rm(folder, { recursive: true, force: true });
  }
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
        { kind: KIND, memo: `bench ${i}`, ...KIND_OPTIONS[KIND] },
        token,
      );
      canaries.push(new URL(planted.value as string).pathname);
    }

    const cpu = stack.cpu();
    let sent = 0;
    /**
     * REQUESTS requests, each a coin toss between a canary and an unknown token, so that both
     * kinds meet the same load (the canary hits' recording included); the run reports the
     * latencies of one kind, and lasts until the hits are recorded.
     */
    const requests =
      (timed: 'canary' | 'unknown'): Variant =>
      async () => {
        const from = sent;
        sent += REQUESTS;
        const latencies: number[] = [];
        const run = await pool(REQUESTS, CONCURRENCY, async (n) => {
          const i = from + n;
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
          if (canary === (timed === 'canary')) latencies.push(ms);
          return ms;
        });
        await api.tripwires.flush();
        return { ops: REQUESTS, latencies, seconds: run.seconds };
      };
    printComparison(
      `${KIND} tripwire requests, ${REQUESTS} a run, each a coin toss between a canary and an unknown token, ${CONCURRENCY} at a time; each row times one kind (ops and CPU are of all the run's requests); api is this process (the API and the client)`,
      await interleave(
        { 'unknown token (baseline)': requests('unknown'), 'canary token': requests('canary') },
        cpu,
        // Every run is the same mix: only the latency of one kind against the other is resolved.
        { ...roundOptions, resolve: ['p50'] },
      ),
    );
    printComparison(
      `Journal append (write + fdatasync), ${APPENDS} entries a round each, in ${config.TRIPWIRE_JOURNAL_DIR}`,
      await journalCost(config.TRIPWIRE_JOURNAL_DIR, cpu),
    );
  } finally {
    await inProcess.stop();
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
