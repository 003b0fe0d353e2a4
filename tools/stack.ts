/**
 * Starts the real servers the service needs, for `npm run dev` and the integration tests:
 * MongoDB (MONGODB_URI if set, else `mongod` on PATH, else the embedded server of tools/mongo-server)
 * and the Temporal dev server with its Web UI (TEMPORAL_ADDRESS if set). Each comes back with a stop
 * function.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, stat } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_NAMES } from '../workflows/shared';
import { ensureMongoServer, ensureTemporalCli, type JavaCommand, type Log } from './dev-tools';

export interface Service {
  /** How to reach it: a MongoDB URI or a Temporal address. */
  address: string;
  description: string;
  /** Its process id when started here (benchmarks read its CPU time); absent when given by address. */
  pid?: number;
  stop(): Promise<void>;
}

export interface ManagedProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** Process groups of children still running, ended should this process exit without stopping them. */
const running = new Set<number>();
process.once('exit', () => {
  for (const group of running) {
    try {
      process.kill(-group, 'SIGTERM');
    } catch {
      // already gone
    }
  }
});

/**
 * Spawns in its own process group so Ctrl-C reaches only the parent, which stops children in order.
 * A parent that exits without stopping them (a crash, a benchmark's uncaught error) sends their
 * groups SIGTERM as it goes, so no database, Temporal or worker is left running on its own.
 */
export function spawnManaged(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; onLine: (line: string) => void },
): ManagedProcess {
  const child = spawn(command, args, {
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  for (const stream of [child.stdout, child.stderr]) {
    if (stream) createInterface({ input: stream }).on('line', options.onLine);
  }
  const exited = new Promise<number | null>((done) => {
    child.once('exit', (code) => done(code));
    child.once('error', () => done(-1));
  });
  const group = child.pid;
  if (group) {
    running.add(group);
    void exited.then(() => running.delete(group));
  }
  const signal = (sig: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, sig);
    } catch {
      // already gone
    }
  };
  return {
    child,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signal('SIGTERM');
      const killer = setTimeout(() => signal('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.end();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

/** Polls `ready` until it resolves true; fails early if the process exits, or after `timeoutMs`. */
async function waitUntil(
  what: string,
  proc: ManagedProcess,
  ready: () => Promise<boolean>,
  timeoutMs: number,
) {
  let exitCode: number | null | undefined;
  void proc.exited.then((code) => (exitCode = code));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exitCode !== undefined)
      throw new Error(`${what} exited (code ${exitCode}) before it was ready`);
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  await proc.stop();
  throw new Error(`${what} was not ready within ${timeoutMs / 1000} s`);
}

async function ensureFreePort(port: number, what: string) {
  if (await portOpen(port)) {
    throw new Error(
      `port ${port} for ${what} is taken: stop whatever uses it, or choose another port`,
    );
  }
}

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

export interface MongoOptions {
  dataDir: string;
  port: number;
  log: Log;
  /** How long the server may take to start and open its data; 180 s unless set. */
  readyWithinMs?: number;
  /** The embedded server's build (another version's, to compare): this tree's unless given. */
  build?: JavaCommand;
  /** The embedded server's heap in MB: sized from its file unless given (a benchmark's choice). */
  heapMb?: number;
}

export async function provideMongo(options: MongoOptions): Promise<Service> {
  if (process.env.MONGODB_URI) {
    return { address: process.env.MONGODB_URI, description: 'MONGODB_URI', stop: async () => {} };
  }
  return startLocalMongo(options);
}

/** A database process of our own, which tests may also kill outright and start again. */
export interface LocalMongo extends Service {
  process: ManagedProcess;
}

/**
 * The embedded server's Java heap, in MB, for a store file of `fileBytes`: 256 MB plus two and a
 * half times the file, at most a quarter of the machine's memory. The server gives 65 % of its heap
 * to MVStore's page cache, and a compacted store's pages take 1.2–1.4× the file's size there (a
 * million sealed records with their Merkle leaves: a 1,708 MB file, 2,372 MB of cache, measured by
 * `npm run bench:page-cache`), so a store of any size is read from memory once warm, the cache
 * warmer (which stops at 90 % of the cache) reaching all of it (docs/architecture.md, Database).
 */
export function embeddedMongoHeapMb(fileBytes: number): number {
  const wanted = 256 + Math.ceil((2.5 * fileBytes) / 2 ** 20);
  return Math.min(wanted, Math.max(256, Math.floor(totalmem() / 4 / 2 ** 20)));
}

/** `mongod` when it is on PATH, else the embedded server; data in `dataDir`, on loopback. */
export async function startLocalMongo({
  dataDir,
  port,
  log,
  readyWithinMs = 180_000,
  build,
  heapMb: chosenHeapMb,
}: MongoOptions): Promise<LocalMongo> {
  await ensureFreePort(port, 'MongoDB');
  const useMongod = onPath('mongod');
  const folder = join(dataDir, useMongod ? 'mongod' : 'mongo-server');
  await mkdir(folder, { recursive: true });
  const onLine = (line: string) => log(line);
  let proc: ManagedProcess;
  if (useMongod) {
    const args = ['--dbpath', folder, '--port', String(port), '--bind_ip', '127.0.0.1', '--quiet'];
    proc = spawnManaged('mongod', args, { onLine });
  } else {
    const { classpath, mainClass } = build ?? (await ensureMongoServer(log));
    // The serial collector: one database thread does the work, and these machines have few cores.
    // Warnings and errors only: the library logs every connection and collection at INFO.
    const quiet = '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn';
    // An explicit heap, sized from the store's file when it opens (the page cache is a share of
    // it). A small heap is touched whole at start (a few tenths of a second), so resident memory is
    // that heap plus the JVM's own from the first minute rather than creeping up as garbage reaches
    // the old generation; a large one is filled by the cache warming within seconds of opening, and
    // touching it first would add seconds to the start (1.5 s for 1.2 GB here).
    // A small young generation: the serial collector copies what survives it, and pages entering
    // the cache all survive, so the collector's default (a third of the heap) made pauses of over
    // a second while a large store's cache was warming; 48 MB kept them under 0.2 s.
    const storeFile = await stat(join(folder, 'data.mv.db')).catch(() => null);
    const heapMb = chosenHeapMb ?? embeddedMongoHeapMb(storeFile?.size ?? 0);
    const heap = [`-Xms${heapMb}m`, `-Xmx${heapMb}m`, '-Xmn48m'];
    if (heapMb <= 512) heap.push('-XX:+AlwaysPreTouch');
    // The JDK keeps, per thread, a native copy buffer as large as the largest file write it made;
    // compaction writes chunks of megabytes, which left resident memory 100 MB above the heap.
    const buffers = '-Djdk.nio.maxCachedBufferSize=1048576';
    // Out of heap, MVStore closes the store and the server would answer every command with an
    // error until restarted: it exits instead, and opening again applies what the redo log holds.
    const exitOnOom = '-XX:+ExitOnOutOfMemoryError';
    const args = ['-XX:+UseSerialGC', exitOnOom, quiet, buffers, ...heap];
    args.push('-cp', classpath, mainClass, '--dbpath', folder, '--port', String(port));
    proc = spawnManaged('java', args, { onLine });
  }
  const name = useMongod ? 'mongod' : 'embedded MongoDB server';
  await waitUntil(name, proc, () => portOpen(port), readyWithinMs);
  return {
    address: `mongodb://127.0.0.1:${port}/`,
    description: `${name}, data in ${folder}`,
    pid: proc.child.pid,
    stop: () => proc.stop(),
    process: proc,
  };
}

export interface TemporalOptions {
  dataDir: string;
  port: number;
  uiPort?: number;
  log: Log;
  /** Off only in the benchmark that measures what `DEV_SERVER_TUNING` is worth. */
  tuned?: boolean;
}

/**
 * The dev server's SQLite in write-ahead-log mode, synced at checkpoints rather than at every
 * commit (each workflow task is a few commits: the default journal made them the alert path's
 * bottleneck), and activities handed to the worker in the answer to the workflow task that
 * schedules them (eager dispatch) rather than through another poll. Measured in
 * `npm run bench:alert-path`; a crash of the machine can lose the last commits of a dev database.
 */
export const DEV_SERVER_TUNING = [
  ...['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal'],
  ...['--dynamic-config-value', 'system.enableActivityEagerExecution=true'],
];

export async function provideTemporal({
  dataDir,
  port,
  uiPort,
  log,
  tuned = true,
}: TemporalOptions): Promise<Service> {
  if (process.env.TEMPORAL_ADDRESS) {
    return {
      address: process.env.TEMPORAL_ADDRESS,
      description: 'TEMPORAL_ADDRESS',
      stop: async () => {},
    };
  }
  return startLocalTemporal({ dataDir, port, uiPort, log, tuned });
}

/** A Temporal dev server of our own (state in `dataDir`), which tests may also kill and start again. */
export async function startLocalTemporal({
  dataDir,
  port,
  uiPort,
  log,
  tuned = true,
}: TemporalOptions): Promise<Service & { process: ManagedProcess }> {
  await ensureFreePort(port, 'Temporal');
  await mkdir(dataDir, { recursive: true });
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port)];
  args.push('--db-filename', join(dataDir, 'temporal.sqlite'), '--log-level', 'error');
  args.push(...(uiPort ? ['--ui-port', String(uiPort)] : ['--headless']));
  if (tuned) args.push(...DEV_SERVER_TUNING);
  const proc = spawnManaged(await ensureTemporalCli(log), args, { onLine: log });
  const address = `127.0.0.1:${port}`;
  await waitUntil('Temporal dev server', proc, () => temporalAnswers(address), 60_000);
  await registerSearchAttributes(address);
  return {
    address,
    description: uiPort ? `Web UI http://localhost:${uiPort}` : 'headless',
    pid: proc.child.pid,
    process: proc,
    stop: () => proc.stop(),
  };
}

/**
 * Registers the search attributes the workflows set and the Web UI filters on, when missing. Done
 * through the operator API rather than start-up flags, so a persisted dev database from an older
 * version gets the newer attributes too.
 */
async function registerSearchAttributes(address: string): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    const namespace = 'default';
    const { customAttributes } = await connection.operatorService.listSearchAttributes({
      namespace,
    });
    const missing = SEARCH_ATTRIBUTE_NAMES.filter((name) => !(name in (customAttributes ?? {})));
    if (!missing.length) return;
    const keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((name) => [name, keyword])),
    });
  } finally {
    await connection.close();
  }
}

async function temporalAnswers(address: string): Promise<boolean> {
  try {
    const connection = await Connection.connect({ address, connectTimeout: 1_000 });
    try {
      await connection.workflowService.describeNamespace({ namespace: 'default' });
      return true;
    } finally {
      await connection.close();
    }
  } catch {
    return false;
  }
}
