import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createTestApp, type TestApp } from '../support/test-app';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../..');

/**
 * A client program written against the generated types: it must type-check, so a route the
 * document describes wrongly (a missing field, a wrong parameter) fails here before it runs.
 */
const CALLS = `import createClient from 'openapi-fetch';
import type { paths } from './api.js';

const client = createClient<paths>({ baseUrl: process.argv[2] });
const email = \`client-\${Date.now()}-\${Math.random().toString(36).slice(2)}@example.com\`;
const password = 'a generated client password';

const signup = await client.POST('/api/auth/signup', { body: { email, password } });
const login = await client.POST('/api/auth/login', { body: { email, password } });
if (!login.data) throw new Error(\`login failed: \${login.response.status}\`);
const headers = { authorization: \`Bearer \${login.data.token}\` };
const planted = await client.POST('/api/canaries', {
  headers,
  body: { kind: 'url', memo: 'from the generated client' },
});
if (!planted.data) throw new Error(\`planting failed: \${planted.response.status}\`);
const fetched = await client.GET('/api/canaries/{canary_id}', {
  headers,
  params: { path: { canary_id: planted.data.canary_id } },
});
const refused = await client.POST('/api/canaries', { headers, body: { kind: 'url', memo: 'x'.repeat(501) } });
const events = await client.GET('/api/threat-events', { headers, params: { query: { limit: 5 } } });

console.log(
  JSON.stringify({
    signup: { status: signup.response.status, userId: signup.data?.user_id },
    login: { status: login.response.status, userId: login.data.user_id },
    planted: { status: planted.response.status, canary: planted.data },
    fetched: { status: fetched.response.status, canary: fetched.data },
    refused: { status: refused.response.status, detail: refused.error?.detail },
    events: { status: events.response.status, page: events.data },
  }),
);
`;

let t: TestApp;
let server: Server;
let base: string;
let dir: string;

beforeAll(async () => {
  t = await createTestApp();
  server = t.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Inside the repository, so the program resolves openapi-fetch from its node_modules.
  mkdirSync(join(ROOT, '.data'), { recursive: true });
  dir = mkdtempSync(join(ROOT, '.data', 'generated-client-'));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  server.close();
  await once(server, 'close');
  await t.close();
});

describe('a client generated from /openapi.json', () => {
  it('when generated with openapi-typescript, then a program using it type-checks and calls four routes', async () => {
    const cli = join(ROOT, 'node_modules/openapi-typescript/bin/cli.js');
    await run(process.execPath, [cli, `${base}/openapi.json`, '--output', join(dir, 'api.d.ts')]);
    writeFileSync(join(dir, 'calls.mts'), CALLS);
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    await run(process.execPath, [
      tsc,
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      '--target',
      'es2022',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      join(dir, 'calls.mts'),
    ]);

    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', join(dir, 'calls.mts'), base],
      {
        cwd: ROOT,
      },
    );
    const result = JSON.parse(stdout) as {
      signup: { status: number; userId: string };
      login: { status: number; userId: string };
      planted: { status: number; canary: { canary_id: string; value: string; memo: string } };
      fetched: { status: number; canary: { canary_id: string } };
      refused: { status: number; detail: string };
      events: { status: number; page: { threat_events: unknown[]; next_cursor: string | null } };
    };
    expect(result.signup.status).toBe(201);
    expect(result.login).toEqual({ status: 200, userId: result.signup.userId });
    expect(result.planted.status).toBe(201);
    expect(result.planted.canary).toMatchObject({ memo: 'from the generated client' });
    expect(result.planted.canary.value).toContain('/r/');
    expect(result.fetched).toEqual({ status: 200, canary: result.planted.canary });
    expect(result.refused).toEqual({ status: 422, detail: expect.stringMatching(/^body\.memo:/) });
    expect(result.events).toEqual({ status: 200, page: { threat_events: [], next_cursor: null } });
  });
});
