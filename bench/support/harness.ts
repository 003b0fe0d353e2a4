/**
 * Shared benchmark plumbing: throw-away servers, the bench server process, and autocannon runs
 * interleaved over rounds (bench/support/rounds.ts) against the first (baseline) route.
 */
import { generateSigner } from '../../src/evidence/log/signed-note';
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
} from '../../tools/stack';
import { builtStartArgs } from './built';
import { StackCpu } from './cpu';
import {
  interleave,
  printComparison,
  type Comparison,
  type RunResult,
  type Variant,
} from './rounds';

/** Load options; other flags are left to the bench script that imports this module. */
export const options = (() => {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      connections: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '3' },
    },
    strict: false,
  });
  return {
    duration: Number(values.duration),
    connections: Number(values.connections),
    /** For benchmarks that run their own rounds; `compare` runs until resolved. */
    rounds: Number(values.rounds),
  };
})();

export interface Target {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: unknown;
}

/** One autocannon run of `options.duration` seconds: its requests and their latencies. */
export async function measure(target: Target): Promise<RunResult & { timeouts: number }> {
  const result = await autocannon({
    url: target.url,
    method: target.method ?? 'GET',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: target.body === undefined ? undefined : JSON.stringify(target.body),
    connections: options.connections,
    duration: options.duration,
  });
  // A refusal means the set-up is wrong; a timeout is a result, reported on stderr.
  if (result.non2xx) throw new Error(`${target.url}: ${result.non2xx} non-2xx answers`);
  if (result.errors)
    console.error(`${target.url}: ${result.errors} timeouts or broken connections`);
  // autocannon keeps a histogram, not every latency: its percentiles stand for the run's.
  return {
    ops: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    timeouts: result.errors,
  };
}

/**
 * Runs every target once a round for `options.duration` seconds, interleaved until resolved
 * (bench/support/rounds.ts), with the CPU per request of the parts `cpu` reads.
 */
export function compare(
  targets: Record<string, Target>,
  cpu = new StackCpu({ client: process.pid }),
): Promise<Comparison> {
  return interleave(
    Object.fromEntries(
      Object.entries(targets).map(([name, target]): [string, Variant] => [
        name,
        () => measure(target),
      ]),
    ),
    cpu,
  );
}

export function report(comparison: Comparison): void {
  const { connections, duration } = options;
  printComparison(`${connections} connections, ${duration} s per run`, comparison);
}

export interface BenchServer {
  /** The real app. */
  url: string;
  /** The same product handler without authentication or metering. */
  bareUrl: string;
  /** The same handler behind the app's HTTP stack (`httpStack`), still without credentials. */
  stackedUrl: string;
  /** The real app with a meter store that counts nothing. */
  unmeteredUrl: string;
  /** The server process, for memory readings. */
  pid: number;
  /** CPU of the server, its database and Temporal, and this process (the load's client). */
  cpu: StackCpu;
  /** Its database, for seeding data directly. */
  mongoUri: string;
  dbName: string;
}

/**
 * Starts MongoDB, Temporal and a server process; stops them all afterwards. `bench` serves the app
 * and the unauthenticated baseline through tsx; `api` builds and runs the production entry point
 * (`node dist/src/main.js`), for readings such as memory that tsx would distort.
 */
export async function withBenchServer(
  run: (server: BenchServer) => Promise<void>,
  kind: 'bench' | 'api' = 'bench',
): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tripwire-bench-'));
  const services: Service[] = [];
  const log = () => undefined;
  try {
    const mongo = await provideMongo({ dataDir, port: await freePort(), log });
    services.push(mongo);
    const temporal = await provideTemporal({ dataDir, port: await freePort(), log });
    services.push(temporal);
    const [port, barePort, stackedPort, unmeteredPort] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ];
    const dbName = `bench_${Date.now()}`;
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    // One process (no tsx wrapper), so its pid is the server's own.
    const args =
      kind === 'api'
        ? builtStartArgs('start:api')
        : ['--import', 'tsx', 'bench/support/bench-server.ts'];
    const server = spawnManaged(process.execPath, args, {
      env: {
        ...process.env,
        HOST: '127.0.0.1',
        PORT: String(port),
        BARE_PORT: String(barePort),
        STACKED_PORT: String(stackedPort),
        UNMETERED_PORT: String(unmeteredPort),
        // Any free port: a running `npm run dev` holds the default 2525.
        DECOY_SMTP_PORT: '0',
        LOG_LEVEL: kind === 'api' ? 'info' : 'warn', // the API's "listening" line is info
        MONGODB_URI: mongo.address,
        MONGODB_DB: dbName,
        TEMPORAL_ADDRESS: temporal.address,
        EVIDENCE_SIGNING_KEY: generateSigner('bench.localhost/evidence').skey,
      },
      onLine: (line) => {
        if (/bench server ready|API listening/.test(line)) ready();
        else if (!line.includes('"level":30')) console.error(`server | ${line}`);
      },
    });
    try {
      await Promise.race([
        started,
        server.exited.then(() => Promise.reject(new Error('bench server exited'))),
      ]);
      await run({
        url: `http://127.0.0.1:${port}`,
        bareUrl: `http://127.0.0.1:${barePort}`,
        stackedUrl: `http://127.0.0.1:${stackedPort}`,
        unmeteredUrl: `http://127.0.0.1:${unmeteredPort}`,
        pid: server.child.pid!,
        cpu: new StackCpu({
          api: server.child.pid,
          database: mongo.pid,
          temporal: temporal.pid,
          client: process.pid,
        }),
        mongoUri: mongo.address,
        dbName,
      });
    } finally {
      await server.stop();
    }
  } finally {
    for (const service of services.reverse()) await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}
