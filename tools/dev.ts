/**
 * `npm run dev`: the whole service on this machine. Starts (or reuses, through MONGODB_URI and
 * TEMPORAL_ADDRESS) MongoDB and the Temporal dev server with its Web UI, then the API and a worker
 * in watch mode (each restarts on a change to the code it runs, the database and Temporal keep
 * running); prints the URLs once everything answers, and stops it all in order on Ctrl-C or
 * SIGTERM.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  provideMongo,
  provideTemporal,
  spawnManaged,
  type ManagedProcess,
  type Service,
} from './stack';

const dataDir = resolve(process.env.DATA_DIR ?? '.data');
const apiPort = Number(process.env.PORT ?? 8080);
const temporalPort = Number(process.env.DEV_TEMPORAL_PORT ?? 7233);
const uiPort = Number(process.env.DEV_TEMPORAL_UI_PORT ?? temporalPort + 1000);
const mongoPort = Number(process.env.DEV_MONGODB_PORT ?? 27017);

const prefix = (name: string) => (line: string) => console.log(`${name.padEnd(9)}| ${line}`);

const services: Service[] = [];
const processes: ManagedProcess[] = [];
let stopping: Promise<never> | undefined;

/** Every caller shares one shutdown: children first, then the servers, then exit. */
function stopAll(code: number): Promise<never> {
  stopping ??= (async () => {
    console.log('\nstopping…');
    await Promise.all(processes.map((p) => p.stop()));
    for (const service of services.reverse()) await service.stop();
    console.log('stopped');
    process.exit(code);
  })();
  return stopping;
}

/**
 * `tsx watch` restarts the process when a file it imports changes; `watch` adds files it reads
 * otherwise (the worker bundles `workflows/` from their path). A process that crashes waits for
 * the next change rather than exit.
 */
function startNode(
  name: string,
  entry: string,
  env: NodeJS.ProcessEnv,
  watch: string[] = [],
): void {
  const args = ['watch', '--clear-screen=false', ...watch.flatMap((glob) => ['--include', glob])];
  const proc = spawnManaged(resolve('node_modules/.bin/tsx'), [...args, entry], {
    env,
    onLine: prefix(name),
  });
  processes.push(proc);
  void proc.exited.then((code) => {
    if (stopping) return;
    console.error(`${name} exited with code ${code}: stopping everything`);
    void stopAll(1);
  });
}

async function waitForApi(timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !stopping) {
    const ready = await fetch(`http://127.0.0.1:${apiPort}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return true;
    await new Promise((r) => setTimeout(r, 500));
  }
  return false;
}

/**
 * A throw-away CA and a certificate for 127.0.0.1 and localhost in `.data/tls/`, made afresh at
 * every start, for local HTTPS receivers (the README walkthrough's): alert channels take only
 * https:// URLs, so the API and worker trust this CA besides any NODE_EXTRA_CA_CERTS already set.
 * The CA's key is deleted once the certificate is signed: the trusted CA can sign nothing else.
 */
async function localReceiverTrust(): Promise<{ NODE_EXTRA_CA_CERTS?: string }> {
  const dir = join(dataDir, 'tls');
  try {
    mkdirSync(dir, { recursive: true });
    const { makeTestCa } = await import('./test-ca.mjs');
    const { NODE_EXTRA_CA_CERTS: ca } = makeTestCa(dir, 30);
    for (const spare of ['ca.key', 'ca.srl', 'server.csr', 'server.ext']) {
      rmSync(join(dir, spare), { force: true });
    }
    const already = process.env.NODE_EXTRA_CA_CERTS;
    if (!already) return { NODE_EXTRA_CA_CERTS: ca };
    const bundle = join(dir, 'trusted.pem');
    writeFileSync(bundle, `${readFileSync(already, 'utf8')}\n${readFileSync(ca, 'utf8')}`);
    return { NODE_EXTRA_CA_CERTS: bundle };
  } catch (err) {
    console.warn(
      `no certificate for local HTTPS receivers (is openssl installed?): ${err instanceof Error ? err.message : String(err)}`,
    );
    return {};
  }
}

async function main(): Promise<void> {
  // `on`, not `once`: a SIGTERM sent to the whole process group (a process manager, `kill --
  // -<pgid>`) reaches this process twice, directly and again from npm, which passes it on; a
  // second signal left to its default ended this process before it had stopped the database and
  // Temporal (in process groups of their own), and left them holding their ports.
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));
  // npm may go without passing a signal on (SIGKILL, a closed terminal): this process is then
  // handed to another parent, and stops what it started rather than leave it holding the ports.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void stopAll(1);
  }, 1_000).unref();

  const mongo = await provideMongo({ dataDir, port: mongoPort, log: prefix('mongodb') });
  services.push(mongo);
  const temporal = await provideTemporal({
    dataDir,
    port: temporalPort,
    uiPort,
    log: prefix('temporal'),
  });
  services.push(temporal);

  const env = {
    ...process.env,
    NODE_ENV: 'development',
    LOG_PRETTY: 'true',
    PORT: String(apiPort),
    MONGODB_URI: mongo.address,
    TEMPORAL_ADDRESS: temporal.address,
    // Development only: alerts may go to receivers on this machine (see localReceiverTrust).
    ALLOW_PRIVATE_WEBHOOK_TARGETS: process.env.ALLOW_PRIVATE_WEBHOOK_TARGETS ?? 'true',
    ...(await localReceiverTrust()),
  };
  startNode('api', 'src/main.ts', env);
  startNode('worker', 'src/worker.ts', env, ['workflows/**']);

  if (!(await waitForApi(60_000))) {
    if (stopping) return;
    console.error(`the API did not become ready: see http://127.0.0.1:${apiPort}/readyz`);
    return stopAll(1);
  }
  console.log(
    [
      '',
      '  The service is running.',
      `  API:          http://localhost:${apiPort}   (health: /healthz, /readyz)`,
      `  Console:      http://localhost:${apiPort}/console/   (API reference: /docs)`,
      `  Temporal:     ${temporal.address}   (${temporal.description})`,
      `  MongoDB:      ${mongo.address}   (${mongo.description})`,
      '  Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  void stopAll(1);
});
