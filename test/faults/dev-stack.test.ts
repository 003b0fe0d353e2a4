/**
 * `npm run dev` as an operator stops it: a SIGTERM to its whole process group (a process manager,
 * `kill -- -<pgid>`) reaches the dev tool twice, once directly and once passed on by npm. Whatever
 * the signals, the database and the Temporal dev server it started (each in a process group of its
 * own) must stop with it, not stay behind holding their ports.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../tools/stack';

/** Whether something accepts connections on the port. */
const listening = (port: number) =>
  new Promise<boolean>((answer) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), answer(true)));
    socket.once('error', () => answer(false));
  });

async function until(what: string, check: () => Promise<boolean>, seconds: number) {
  for (let waited = 0; waited < seconds * 4; waited++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what}: not within ${seconds} s`);
}

let dev: ChildProcess | undefined;
let dataDir: string;
afterAll(async () => {
  // After a failure: ask it to stop what it started, and force it only if it will not.
  if (dev && dev.exitCode === null && dev.signalCode === null) {
    const gone = new Promise((done) => dev!.once('exit', done));
    process.kill(-dev.pid!, 'SIGINT');
    const timer = setTimeout(() => process.kill(-dev!.pid!, 'SIGKILL'), 30_000);
    await gone;
    clearTimeout(timer);
  }
  await rm(dataDir, { recursive: true, force: true });
});

it('when npm run dev gets SIGTERM as a process group, then its database and Temporal stop with it', async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'dev-stack-'));
  const [api, temporal, ui, mongo] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  let output = '';
  dev = spawn('npm', ['run', '--silent', 'dev'], {
    detached: true, // its own process group, as a terminal or a process manager gives it
    env: {
      ...process.env,
      PORT: String(api),
      DEV_TEMPORAL_PORT: String(temporal),
      DEV_TEMPORAL_UI_PORT: String(ui),
      DEV_MONGODB_PORT: String(mongo),
      DECOY_SMTP_PORT: '0',
      WORKER_METRICS_PORT: '0',
      DATA_DIR: dataDir,
      // Its own servers, not the test suite's.
      MONGODB_URI: '',
      TEMPORAL_ADDRESS: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  dev.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  dev.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((done) => dev!.once('exit', done));
  await until(
    'the API ready',
    () =>
      fetch(`http://127.0.0.1:${api}/readyz`).then(
        (r) => r.ok,
        () => false,
      ),
    240,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${output.slice(-3000)}`);
  });
  expect([await listening(mongo), await listening(temporal)]).toEqual([true, true]);

  process.kill(-dev.pid!, 'SIGTERM');
  await exited;

  await until(
    'the database and Temporal stopped',
    async () => !(await listening(mongo)) && !(await listening(temporal)),
    30,
  );
  expect(output).toContain('stopped');
}, 360_000);
