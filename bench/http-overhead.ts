/**
 * HTTP overhead benchmark: throughput and latency of a session-authenticated route
 * (`GET /api/users/me`: bearer-token lookup in MongoDB + user read) against the unauthenticated
 * `GET /healthz` of the same API process, measured in one run so the ratio survives a noisy machine.
 *
 *   npm run bench -- [--duration 10] [--connections 10] [--rounds 2]
 *
 * Starts its own throw-away MongoDB-wire server and Temporal dev server (or uses MONGODB_URI /
 * TEMPORAL_ADDRESS), runs the API as a separate process, and drives it with autocannon.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import {
  freePort,
  provideMongo,
  provideTemporal,
  spawnManaged,
  type Service,
} from '../tools/stack';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const rounds = Number(values.rounds);

interface Sample {
  rps: number;
  p50: number;
  p99: number;
}

async function measure(url: string, headers: Record<string, string> = {}): Promise<Sample> {
  const result = await autocannon({ url, connections, duration, headers });
  if (result.non2xx || result.errors)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

/** Interleaves the routes over several rounds and keeps each route's median round. */
function median(samples: Sample[]): Sample {
  const sorted = [...samples].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tripwire-bench-'));
  const services: Service[] = [];
  const log = () => undefined;
  try {
    services.push(await provideMongo({ dataDir, port: await freePort(), log }));
    services.push(await provideTemporal({ dataDir, port: await freePort(), log }));
    const port = await freePort();
    const api = spawnManaged('node_modules/.bin/tsx', ['src/main.ts'], {
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        MONGODB_URI: services[0]!.address,
        MONGODB_DB: 'bench',
        TEMPORAL_ADDRESS: services[1]!.address,
      },
      onLine: (line) => console.error(`api | ${line}`),
    });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitForReady(base);
      const token = await signIn(base);
      const routes = {
        'GET /healthz (no auth, baseline)': () => measure(`${base}/healthz`),
        'GET /api/users/me (session token)': () =>
          measure(`${base}/api/users/me`, { authorization: `Bearer ${token}` }),
      };
      const samples = new Map<string, Sample[]>();
      for (let round = 1; round <= rounds; round++) {
        for (const [name, run] of Object.entries(routes)) {
          console.error(`round ${round}/${rounds}: ${name} for ${duration} s…`);
          samples.set(name, [...(samples.get(name) ?? []), await run()]);
        }
      }
      report([...samples].map(([name, s]) => [name, median(s)] as const));
    } finally {
      await api.stop();
    }
  } finally {
    for (const service of services.reverse()) await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function waitForReady(base: string): Promise<void> {
  for (let i = 0; i < 120; i++) {
    if (
      await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('API not ready after 60 s');
}

async function signIn(base: string): Promise<string> {
  const body = JSON.stringify({ email: 'bench@example.com', password: 'benchmark password' });
  const headers = { 'content-type': 'application/json' };
  await fetch(`${base}/api/auth/signup`, { method: 'POST', headers, body });
  const res = await fetch(`${base}/api/auth/login`, { method: 'POST', headers, body });
  return ((await res.json()) as { token: string }).token;
}

function report(rows: (readonly [string, Sample])[]): void {
  const baseline = rows[0]![1].rps;
  console.log(`\n${connections} connections, ${duration} s per run, median of ${rounds} rounds\n`);
  console.log('| Route | req/s | p50 ms | p99 ms | vs baseline |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [name, s] of rows) {
    const ratio = `${((s.rps / baseline) * 100).toFixed(0)} %`;
    console.log(`| ${name} | ${s.rps.toFixed(0)} | ${s.p50} | ${s.p99} | ${ratio} |`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
