import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import express from 'express';
import request from 'supertest';
import { receiverPackageRoutes } from '../../src/alerts/receiver-package.routes';
import { errorHandler } from '../../src/http/errors';
import { requestLogging } from '../../src/http/request-logging';
import pino from 'pino';
import { freePort } from '../../tools/stack';
import { signUpAndLogIn } from '../support/accounts';
import { startAlertStack } from '../support/alert-stack';
import type { Hit, Receiver } from '../support/receiver';
import type { TestApp } from '../support/test-app';

// The receivers' package as a user gets it: packed by the build step, downloaded from the running
// service's GET /downloads/webhook-verify.tgz, installed from that file into a scratch project
// with npm (offline: no registry), imported from there (CommonJS and ES modules), its examples run
// as real receivers (Express, node:http, a Fetch handler given real `Headers`), all against a
// delivery that the real workflow sent.
const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const SECRET = 'receiver-package-secret';

let t: TestApp;
let receiver: Receiver;
let stop: () => Promise<void>;
let scratch: string;
let delivery: Hit;
let download: Response;
const TARBALL = 'webhook-verify.tgz';

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

  await run(process.execPath, ['tools/build-webhook-verify.mjs'], { cwd: ROOT });
  const server: Server = createServer(t.app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  try {
    download = await fetch(`http://127.0.0.1:${port}/downloads/${TARBALL}`);
    scratch = await mkdtemp(join(tmpdir(), 'webhook-verify-'));
    await writeFile(join(scratch, TARBALL), Buffer.from(await download.clone().arrayBuffer()));
  } finally {
    server.close();
  }
  await writeFile(join(scratch, 'package.json'), '{"name":"scratch","private":true}');
  await run('npm', ['install', '--no-audit', '--no-fund', '--offline', `./${TARBALL}`], {
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
  const { secret, headers, body, asFetchHeaders } = JSON.parse(Buffer.concat(chunks).toString());
  const secrets = secret.split(' ');
  const shaped = asFetchHeaders ? new Headers(headers) : headers;
  lib.verifyDelivery(secrets, shaped, Buffer.from(body, 'base64')).then((r) => console.log(JSON.stringify(r)));
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

  it('when downloaded from the service, then it is the gzip tarball, served as an attachment', () => {
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/gzip');
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename=${TARBALL}`);
  });

  it('when the build has not packed it, then the download answers 503 naming the command', async () => {
    const missing = join(scratch, 'not-built', TARBALL);
    const app = express()
      .use(requestLogging(pino({ level: 'silent' })))
      .use(receiverPackageRoutes(missing))
      .use(errorHandler);
    const res = await request(app).get(`/downloads/${TARBALL}`);
    expect(res.status).toBe(503);
    expect(res.body.detail).toBe(
      `The receivers' package is not built in ${missing}: run npm run build`,
    );
  });

  it('when given Fetch Headers and several secrets, then it verifies with the right one among them and refuses wrong ones', async () => {
    const cjs = `const lib = require('@tripwire/webhook-verify');${check}`;
    const input = {
      headers: headers(delivery),
      body: delivery.rawBody.toString('base64'),
      asFetchHeaders: true,
    };
    const ok = await inScratch(['-e', cjs], { ...input, secret: `not-the-secret ${SECRET}` });
    expect(JSON.parse(ok)).toMatchObject({ ok: true, event: 'canary.test_alert' });
    const wrong = await inScratch(['-e', cjs], { ...input, secret: 'not-the-secret other-one' });
    expect(JSON.parse(wrong)).toEqual({ ok: false, reason: 'signature does not match' });
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
    const { stdout } = await run('tar', ['-tzf', TARBALL], { cwd: scratch });
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

  it('when the Fetch handler example gets the real delivery as a Request, then it answers 200, and 401 once the body is changed', async () => {
    const handler = join(
      scratch,
      'node_modules',
      '@tripwire',
      'webhook-verify',
      'examples',
      'fetch.mjs',
    );
    const script = `import receiver from ${JSON.stringify(handler)};
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const { headers, body, tampered } = JSON.parse(Buffer.concat(chunks).toString());
const env = { WEBHOOK_SECRET: ${JSON.stringify(SECRET)} };
const answer = (b) =>
  receiver.fetch(new Request('http://receiver.test/tripwire', { method: 'POST', headers, body: Buffer.from(b, 'base64') }), env);
console.log(JSON.stringify([(await answer(body)).status, (await answer(tampered)).status]));`;
    const out = await inScratch(['--input-type=module', '-e', script], {
      headers: headers(delivery),
      body: delivery.rawBody.toString('base64'),
      tampered: tampered().toString('base64'),
    });
    expect(JSON.parse(out.split('\n').at(-1)!)).toEqual([200, 401]);
    expect(out).toContain(`canary.test_alert ${String(delivery.headers['x-service-delivery'])}`);
  });

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
