import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { freePort } from '../../tools/stack';
import { signUpAndLogIn } from '../support/accounts';
import { startAlertStack } from '../support/alert-stack';
import type { Hit, Receiver } from '../support/receiver';
import type { TestApp } from '../support/test-app';

// The receivers' package as a user gets it: packed to a tarball, installed into a scratch project,
// imported from there (CommonJS and ES modules), its examples run as real receivers, all against
// a delivery that the real workflow sent.
const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const SECRET = 'receiver-package-secret';

let t: TestApp;
let receiver: Receiver;
let stop: () => Promise<void>;
let scratch: string;
let delivery: Hit;

const tampered = () => Buffer.concat([delivery.rawBody, Buffer.from(' ')]);
const headers = (hit: Hit) =>
  Object.fromEntries(Object.entries(hit.headers).map(([k, v]) => [k, String(v)]));

beforeAll(async () => {
  ({ t, receiver, stop } = await startAlertStack());
  const who = await signUpAndLogIn(t.app);
  const auth = { Authorization: `Bearer ${who.token}` };
  const created = await request(t.app)
    .post('/api/alert-channels')
    .set(auth)
    .send({
      kind: 'webhook',
      name: 'receiver',
      url: receiver.url('/package'),
      secret: SECRET,
      standardWebhooks: true,
    });
  await request(t.app).post(`/api/alert-channels/${created.body.id}/test`).set(auth);
  delivery = receiver.hitsOn('/package')[0]!;

  scratch = await mkdtemp(join(tmpdir(), 'webhook-verify-'));
  await run('npm', ['pack', '--pack-destination', scratch], {
    cwd: join(ROOT, 'packages', 'webhook-verify'),
  });
  const [tarball] = (await readdir(scratch)).filter((f) => f.endsWith('.tgz'));
  await writeFile(join(scratch, 'package.json'), '{"name":"scratch","private":true}');
  await run('npm', ['install', '--no-audit', '--no-fund', '--offline', `./${tarball}`], {
    cwd: scratch,
  });
}, 180_000);
afterAll(async () => {
  await stop();
  await rm(scratch, { recursive: true, force: true });
});

/** Runs `code` in the scratch project with the delivery on stdin; answers what it printed. */
async function inScratch(args: string[], input: object): Promise<string> {
  const child = spawn(process.execPath, args, { cwd: scratch });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  child.stdin.end(JSON.stringify(input));
  await once(child, 'close');
  return out.trim();
}

const check = `
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const { secret, headers, body } = JSON.parse(Buffer.concat(chunks).toString());
  console.log(JSON.stringify(lib.verifyDelivery(secret, headers, Buffer.from(body, 'base64'))));
});`;

describe('the packed package', () => {
  it('when required from a scratch project, then it verifies a real delivery and refuses a tampered one', async () => {
    const cjs = `const lib = require('@tripwire/webhook-verify');${check}`;
    const input = { secret: SECRET, headers: headers(delivery) };
    const ok = await inScratch(['-e', cjs], {
      ...input,
      body: delivery.rawBody.toString('base64'),
    });
    expect(JSON.parse(ok)).toEqual({
      ok: true,
      event: 'canary.test_alert',
      deliveryId: delivery.headers['x-service-delivery'],
    });
    const bad = await inScratch(['-e', cjs], { ...input, body: tampered().toString('base64') });
    expect(JSON.parse(bad)).toEqual({ ok: false, reason: 'signature does not match' });
  });

  it('when imported as an ES module, then the same check works', async () => {
    const esm = `import * as lib from '@tripwire/webhook-verify';${check}`;
    const out = await inScratch(['--input-type=module', '-e', esm], {
      secret: SECRET,
      headers: headers(delivery),
      body: delivery.rawBody.toString('base64'),
    });
    expect(JSON.parse(out)).toMatchObject({ ok: true });
  });

  it('when installed, then it ships compiled JavaScript with types and its exports map', async () => {
    const { stdout } = await run(
      'tar',
      ['-tzf', (await readdir(scratch)).find((f) => f.endsWith('.tgz'))!],
      {
        cwd: scratch,
      },
    );
    expect(stdout.split('\n')).toEqual(
      expect.arrayContaining([
        'package/dist/index.js',
        'package/dist/index.d.ts',
        'package/package.json',
      ]),
    );
    expect(stdout).not.toContain('src/index.ts');
  });
});

describe('the examples, run as receivers', () => {
  async function serve(file: string): Promise<{ url: string; proc: ChildProcess }> {
    const port = await freePort();
    const proc = spawn(
      process.execPath,
      [join(scratch, 'node_modules', '@tripwire', 'webhook-verify', 'examples', file)],
      // Express comes from the repository's own dependencies.
      {
        env: {
          ...process.env,
          PORT: String(port),
          WEBHOOK_SECRET: SECRET,
          NODE_PATH: join(ROOT, 'node_modules'),
        },
      },
    );
    let output = '';
    await new Promise<void>((resolve, reject) => {
      proc.stdout.on('data', (c: Buffer) => {
        output += c.toString();
        if (output.includes('listening')) resolve();
      });
      proc.stderr.on('data', (c: Buffer) => (output += c.toString()));
      proc.on('exit', (code) => reject(new Error(`${file} exited with ${code}: ${output}`)));
    });
    return { url: `http://127.0.0.1:${port}/tripwire`, proc };
  }
  /** The delivery's own headers (not the connection's: length, host) with the given body. */
  const replay = (url: string, body: Buffer) =>
    fetch(url, {
      method: 'POST',
      headers: Object.fromEntries(
        Object.entries(headers(delivery)).filter(
          ([k]) => k.startsWith('x-service-') || k === 'content-type',
        ),
      ),
      body,
    });

  it.each(['express.js', 'node.mjs'])(
    'when %s receives the real delivery, then it answers 200, and 401 once the body is changed',
    async (file) => {
      const { url, proc } = await serve(file);
      try {
        expect((await replay(url, delivery.rawBody)).status).toBe(200);
        expect((await replay(url, tampered())).status).toBe(401);
      } finally {
        proc.kill();
      }
    },
  );

  it('when the Python snippet checks the real delivery, then it accepts it and refuses a tampered one', async () => {
    const script = [
      'import base64, json, sys',
      `sys.path.insert(0, ${JSON.stringify(join(scratch, 'node_modules', '@tripwire', 'webhook-verify', 'examples'))})`,
      'from verify import verify',
      'd = json.load(sys.stdin)',
      'body = base64.b64decode(d["body"])',
      'print(json.dumps([verify(d["secret"], d["headers"], body), verify(d["secret"], d["headers"], body + b" ")]))',
    ].join('\n');
    const child = spawn('python3', ['-c', script]);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stdin.end(
      JSON.stringify({
        secret: SECRET,
        headers: headers(delivery),
        body: delivery.rawBody.toString('base64'),
      }),
    );
    await once(child, 'close');
    expect(JSON.parse(out)).toEqual([
      [true, null],
      [false, 'signature does not match'],
    ]);
  });
});

describe('Standard Webhooks', () => {
  it('when the channel asks for them, then the standardwebhooks library verifies the delivery', () => {
    const webhook = new Webhook(Buffer.from(SECRET).toString('base64'));
    expect(webhook.verify(delivery.rawBody.toString(), headers(delivery))).toMatchObject({
      version: '1',
      event: 'canary.test_alert',
    });
    expect(delivery.headers['webhook-id']).toBe(delivery.headers['x-service-delivery']);
    expect(() => webhook.verify(tampered().toString(), headers(delivery))).toThrow(
      /No matching signature/,
    );
  });
});
