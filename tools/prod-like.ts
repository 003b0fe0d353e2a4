/**
 * `npm run stack:prod-like`: the production topology on this machine, every part its own process:
 * one database and one Temporal (as `npm run dev` provides them), two API processes and three
 * workers on one task queue. `--apis N --workers N` change the counts; Ctrl-C stops it all.
 * The integration test `test/integration/prod-like.test.ts` runs it through `startProdLike`.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  freePort,
  provideMongo,
  provideTemporal,
  spawnManaged,
  type ManagedProcess,
  type Service,
} from './stack';

export interface ProdLikeProcess {
  name: string;
  /** The API's base URL, or the worker's metrics and health endpoint. */
  url: string;
  proc: ManagedProcess;
}

export interface ProdLikeStack {
  mongo: Service;
  temporal: Service;
  apis: ProdLikeProcess[];
  workers: ProdLikeProcess[];
  stop(): Promise<void>;
}

export interface ProdLikeOptions {
  dataDir: string;
  apis?: number;
  workers?: number;
  /** Settings for every API and worker (database name, task queue, log level, …). */
  env?: Record<string, string>;
  /** The first API's port; the others take the next ones. 0: free ports. */
  apiPort?: number;
  log: (source: string, line: string) => void;
}

/** Polls `url` until it answers 2xx, or fails when the process exits first or after `timeoutMs`. */
async function answers(name: string, url: string, proc: ManagedProcess, timeoutMs: number) {
  let exited: number | null | undefined;
  void proc.exited.then((code) => (exited = code));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited !== undefined)
      throw new Error(`${name} exited (code ${exited}) before it was ready`);
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${name} did not answer ${url} within ${timeoutMs / 1000} s`);
}

export async function startProdLike(options: ProdLikeOptions): Promise<ProdLikeStack> {
  const { dataDir, log } = options;
  const services: Service[] = [];
  const processes: ProdLikeProcess[] = [];
  const stop = async () => {
    await Promise.all(processes.map((p) => p.proc.stop()));
    for (const service of services.reverse()) await service.stop();
  };
  try {
    const mongo = await provideMongo({
      dataDir,
      port: await freePort(),
      log: (line) => log('mongodb', line),
    });
    services.push(mongo);
    const temporal = await provideTemporal({
      dataDir,
      port: await freePort(),
      log: (line) => log('temporal', line),
    });
    services.push(temporal);
    const env = {
      ...process.env,
      MONGODB_URI: mongo.address,
      TEMPORAL_ADDRESS: temporal.address,
      ...options.env,
    };
    const start = (name: string, entry: string, extra: Record<string, string>, url: string) => {
      const proc = spawnManaged(process.execPath, ['--import', 'tsx', entry], {
        env: { ...env, ...extra },
        onLine: (line) => log(name, line),
      });
      const started = { name, url, proc };
      processes.push(started);
      return started;
    };

    const apis: ProdLikeProcess[] = [];
    for (let i = 0; i < (options.apis ?? 2); i++) {
      const port = options.apiPort ? options.apiPort + i : await freePort();
      // Each API's decoy mail listener on a free port: only one can hold a fixed one.
      apis.push(
        start(
          `api-${i + 1}`,
          'src/main.ts',
          { PORT: String(port), DECOY_SMTP_PORT: '0' },
          `http://127.0.0.1:${port}`,
        ),
      );
    }
    await Promise.all(apis.map((a) => answers(a.name, `${a.url}/readyz`, a.proc, 90_000)));
    // One worker at a time: each binds its metrics port and, at start, a free port for the SDK's
    // exporter; a port chosen for the next worker before the previous one bound its own could be
    // the one that worker's exporter takes. Workers bundle their workflows before they poll:
    // /healthz answers once they run.
    const workers: ProdLikeProcess[] = [];
    for (let i = 0; i < (options.workers ?? 3); i++) {
      const port = await freePort();
      const worker = start(
        `worker-${i + 1}`,
        'src/worker.ts',
        { WORKER_METRICS_PORT: String(port) },
        `http://127.0.0.1:${port}`,
      );
      workers.push(worker);
      await answers(worker.name, `${worker.url}/healthz`, worker.proc, 180_000);
    }
    return { mongo, temporal, apis, workers, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      apis: { type: 'string', default: '2' },
      workers: { type: 'string', default: '3' },
    },
  });
  const prefix = (source: string, line: string) => console.log(`${source.padEnd(9)}| ${line}`);
  const stack = await startProdLike({
    dataDir: resolve(process.env.DATA_DIR ?? '.data/prod-like'),
    apis: Number(values.apis),
    workers: Number(values.workers),
    apiPort: Number(process.env.PORT ?? 8080),
    env: {
      NODE_ENV: 'production',
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      COOKIE_SECURE: 'false',
    },
    log: prefix,
  });
  let stopping = false;
  const stopAll = (code: number) => {
    if (stopping) return;
    stopping = true;
    console.log('\nstopping…');
    void stack.stop().then(() => process.exit(code));
  };
  process.once('SIGINT', () => stopAll(0));
  process.once('SIGTERM', () => stopAll(0));
  for (const p of [...stack.apis, ...stack.workers]) {
    void p.proc.exited.then((code) => {
      if (stopping) return;
      console.error(`${p.name} exited with code ${code}: stopping everything`);
      stopAll(1);
    });
  }
  console.log(
    [
      '',
      '  The production-like stack is running.',
      ...stack.apis.map((a) => `  ${a.name}:  ${a.url}   (/readyz, /metrics)`),
      ...stack.workers.map((w) => `  ${w.name}: ${w.url}   (/healthz, /metrics)`),
      `  Temporal: ${stack.temporal.address}   MongoDB: ${stack.mongo.address}`,
      '  Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
