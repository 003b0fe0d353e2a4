import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { dirname, join } from 'node:path';
import { freePort } from '../../tools/stack';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';

// The README's "Try it" section, its shell blocks run as written by bash against a real API (on a
// port, as `npm run dev` serves it) with a real worker on the test Temporal server and database.
// Only the variables the walkthrough leaves open are set: the API's address, the receiver's port,
// and the certificate (the test CA's, which this process trusts as the dev worker trusts .data/tls).
const ROOT = join(__dirname, '..', '..');

function walkthroughScript(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = /^## Try it$([\s\S]*?)^## /m.exec(readme)?.[1] ?? '';
  const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  if (!blocks.length) throw new Error('README.md has no ```sh blocks under "## Try it"');
  return ['set -euo pipefail', ...blocks].join('\n');
}

let t: TestApp;
let worker: { stop(): Promise<void> };
let server: Server;
let bash: ChildProcess | undefined;
let run: { code: number | null; stdout: string; stderr: string };

beforeAll(async () => {
  const port = await freePort();
  t = await createTestApp({
    config: testConfig({
      ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    }),
  });
  worker = await startTestWorker(t.mongo.db, t.config.TEMPORAL_TASK_QUEUE);
  server = t.app.listen(port, '127.0.0.1');
  await once(server, 'listening');

  // Its own process group, so that afterAll ends the receiver too if the script is cut short.
  const child = spawn('bash', ['-c', walkthroughScript()], {
    cwd: ROOT,
    detached: true,
    env: {
      ...process.env,
      API: `http://127.0.0.1:${port}`,
      RECEIVER_PORT: String(await freePort()),
      RECEIVER_TLS: dirname(process.env.TEST_TLS_CERT!),
    },
  });
  bash = child;
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  bash = undefined;
  run = { code, stdout, stderr };
}, 180_000);

afterAll(async () => {
  if (bash?.pid) process.kill(-bash.pid, 'SIGKILL');
  server?.closeAllConnections();
  await new Promise((done) => (server ? server.close(done) : done(undefined)));
  await worker?.stop();
  await t?.close();
});

/** The test's own reads, once `ready` holds (the outcome is written just after the receiver answers). */
async function eventually<T>(read: () => Promise<T>, ready: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 30_000;
  let value = await read();
  while (!ready(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    value = await read();
  }
  return value;
}

describe('the README walkthrough', () => {
  it('when its shell blocks run as written, then every step succeeds', () => {
    // The exit status with what the script said on stderr, so a failure shows which step broke.
    expect(`exit ${run.code}\n${run.stderr}`).toMatch(/^exit 0\n/);
  });

  it('when it signs up and plants a canary, then the account and its URL canary exist', async () => {
    const users = await t.mongo.db.collection('users').find().toArray();
    expect(users).toHaveLength(1);
    expect(run.stdout).toContain(String(users[0]!._id));
    const canaries = await t.mongo.db.collection('canaries').find().toArray();
    expect(canaries).toEqual([expect.objectContaining({ kind: 'url', memo: 'wiki page' })]);
  });

  it('when the canary fires, then the receiver verifies the signed alert it was delivered', async () => {
    const channels = await t.mongo.db.collection('alert_channels').find().toArray();
    expect(channels).toEqual([expect.objectContaining({ kind: 'webhook' })]);
    const channelId = String(channels[0]!._id);
    expect(run.stdout).toContain(channelId);
    const verified = /^verified: (\S+) (\S+)$/m.exec(run.stdout);
    expect(verified?.[1]).toBe('canary.tripwire_triggered');
    const deliveries = await eventually(
      () => t.mongo.db.collection('alert_deliveries').find({ channelId }).toArray(),
      (all) => all.length === 1 && all[0]!.outcome !== null,
    );
    expect(deliveries).toEqual([
      expect.objectContaining({
        _id: verified?.[2],
        event: 'canary.tripwire_triggered',
        outcome: 'delivered',
      }),
    ]);
  });

  it('when the threat events are listed, then the canary firing is the one shown', async () => {
    const events = await t.mongo.db.collection('threat_events').find().toArray();
    expect(events).toHaveLength(1);
    expect(run.stdout).toContain(String(events[0]!._id));
  });
});
