/**
 * The running service under a steady mixed load for a while: does anything grow that should not?
 * The whole stack as `npm run dev` runs it (the embedded database, or MONGODB_URI; the Temporal dev
 * server; a real worker process delivering alerts to a local HTTPS receiver), the API in this
 * process, and `--rate` requests per second of a mix of real calls: tripwire hits from a few dozen
 * sources (each recorded, sealed as evidence, and alerted once per storm through Temporal) and the
 * console's reads (canaries, threat events, dashboard, usage), with a new canary planted now and
 * then. Every `--sample-s` seconds: the database's files, the database server's resident memory,
 * the documents' own size (dbStats), how full the embedded store's chunks and file are, the
 * requests answered in that interval with their p50/p99, the CPU each part of the stack spent per
 * request answered (the API and this client share this process), and the load average.
 *
 *   npm run bench:service-soak -- [--minutes 10] [--rate 25] [--sample-s 60]
 *
 * "Flat after warm-up" is read from the last rows: resident memory level, and the store file
 * growing no faster than the documents it holds.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import { MongoClient } from 'mongodb';
import { deltaBetween } from './support/cpu';
import { pct } from './support/latency';
import { loadLine } from './support/load';
import { storeStatus } from './support/store-status';
import { startWorkerStack } from './support/worker-stack';
import { startInProcessApi } from './support/in-process-api';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    rate: { type: 'string', default: '25' },
    'sample-s': { type: 'string', default: '60' },
  },
});
const MINUTES = Number(values.minutes);
const RATE = Number(values.rate);
const SAMPLE_S = Number(values['sample-s']);
/** Requests in flight at most; a slower service then gets fewer, and the table shows it. */
const MAX_IN_FLIGHT = 50;

/** The database server process listening on `port` (the embedded server or mongod), by /proc. */
function databaseProcess(port: string): { pid: number; dbPath: string } | undefined {
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const at = (flag: string) => args[args.indexOf(flag) + 1];
      if (args.includes('--dbpath') && at('--port') === port) {
        return { pid: Number(pid), dbPath: at('--dbpath')! };
      }
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

const residentMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function folderMb(folder: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total / 1e6;
}

async function main(): Promise<void> {
  const stack = await startWorkerStack('soak', {
    TRUST_PROXY: 'loopback',
    COOKIE_SECURE: 'false',
  });
  const inProcess = await startInProcessApi(stack.env);
  const { config, base, call } = inProcess;
  const database = databaseProcess(new URL(config.MONGODB_URI).port);
  const stats = new MongoClient(config.MONGODB_URI);
  /** How full the embedded server's chunks and file are (its serverStatus); mongod has no such. */
  const storeFill = () => storeStatus(stats.db());

  try {
    await stack.ready();
    const { auth } = await inProcess.accountWithWebhook({
      name: 'soak',
      url: stack.receiver.url('/hook'),
      secret: 'soak-webhook-secret',
    });
    const plant = async () => {
      const canary = await call('/api/canaries', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ kind: 'url', platform: 'soak' }),
      });
      return new URL(canary.value as string).pathname;
    };
    const tripwires: string[] = [];
    for (let i = 0; i < 10; i++) tripwires.push(await plant());

    /**
     * The i-th request of the mix: half tripwire hits, half the console's reads and now and then
     * a new canary. Returns what it was.
     */
    const request = async (i: number): Promise<string> => {
      const reads = ['/api/canaries', '/api/threat-events', '/api/dashboard', '/api/usage'];
      if (i % 2 === 0) {
        const res = await fetch(`${base}${tripwires[(i / 2) % tripwires.length]!}`, {
          headers: { 'x-forwarded-for': `198.51.100.${i % 40}` },
        });
        await res.arrayBuffer();
        if (res.status >= 400) throw new Error(`tripwire hit: HTTP ${res.status}`);
        return 'hit';
      }
      if (i % 200 === 1) {
        tripwires.push(await plant());
        return 'plant';
      }
      const path = reads[((i - 1) / 2) % reads.length]!;
      await call(path, { headers: auth });
      return path.slice('/api/'.length);
    };

    const cpu = stack.cpu();
    const parts = cpu.parts();
    const rows = [
      `| Service soak, ${RATE} requests/s | store files MB | documents MB (dbStats) | files ÷ documents | chunks / file in use % | database RSS MB | requests | errors | p50 ms | p99 ms | p50 ms by request | ${parts.map((p) => `${p === 'api' ? 'API and client' : p} CPU ms/request`).join(' | ')} | load (1 min) |`,
      `|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|${'---:|'.repeat(parts.length + 1)}`,
    ];
    const loadBefore = loadavg();
    let cpuBefore = cpu.read();
    let latencies: number[] = [];
    let byKind = new Map<string, number[]>();
    let errors = 0;
    let lastError = '';
    const takeSample = async (label: string) => {
      const { dataSize } = (await stats.db(config.MONGODB_DB).command({ dbStats: 1 })) as {
        dataSize: number;
      };
      const fill = await storeFill();
      const filesMb = database ? await folderMb(database.dbPath) : undefined;
      const sorted = [...latencies].sort((a, b) => a - b);
      const cpuNow = cpu.read();
      const spent = deltaBetween(cpuBefore, cpuNow);
      cpuBefore = cpuNow;
      const perRequest = (seconds: number) =>
        sorted.length ? ((seconds * 1000) / sorted.length).toFixed(2) : '—';
      const row =
        `| ${label} | ${filesMb?.toFixed(1) ?? '—'} | ${(dataSize / 1e6).toFixed(1)} | ` +
        `${filesMb !== undefined && dataSize > 0 ? (filesMb / (dataSize / 1e6)).toFixed(1) : '—'} | ` +
        `${fill ? `${fill.chunksFillPercent} / ${fill.fileFillPercent}` : '—'} | ` +
        `${database ? residentMb(database.pid).toFixed(0) : '—'} | ` +
        `${sorted.length} | ${errors} | ${sorted.length ? pct(sorted, 50).toFixed(1) : '—'} | ` +
        `${sorted.length ? pct(sorted, 99).toFixed(1) : '—'} | ` +
        `${[...byKind]
          .map(
            ([kind, ms]) =>
              `${kind} ${pct(
                ms.sort((a, b) => a - b),
                50,
              ).toFixed(0)}`,
          )
          .join(', ')} | ` +
        `${parts.map((p) => perRequest(spent.get(p) ?? 0)).join(' | ')} | ${loadavg()[0]!.toFixed(2)} |`;
      rows.push(row);
      console.error(row + (lastError ? ` (last error: ${lastError})` : ''));
      latencies = [];
      byKind = new Map();
      errors = 0;
      lastError = '';
    };

    await takeSample('start');
    const started = performance.now();
    const endAt = started + MINUTES * 60_000;
    let nextSample = started + SAMPLE_S * 1000;
    let inFlight = 0;
    for (let i = 0; performance.now() < endAt; i++) {
      const due = started + (i * 1000) / RATE;
      await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
      if (inFlight < MAX_IN_FLIGHT) {
        inFlight++;
        const sent = performance.now();
        void request(i)
          .then(
            (kind) => {
              const ms = performance.now() - sent;
              latencies.push(ms);
              byKind.set(kind, [...(byKind.get(kind) ?? []), ms]);
            },
            (err: unknown) => {
              errors++;
              lastError = String(err);
            },
          )
          .finally(() => inFlight--);
      }
      if (performance.now() >= nextSample) {
        await takeSample(`${((performance.now() - started) / 60_000).toFixed(1)} min`);
        nextSample += SAMPLE_S * 1000;
      }
    }
    while (inFlight > 0) await new Promise((r) => setTimeout(r, 50));
    console.log(`\n> ${loadLine(loadBefore)}\n\n${rows.join('\n')}`);
  } finally {
    await stats.close();
    await inProcess.stop();
    await stack.stop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
