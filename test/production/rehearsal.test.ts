import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { Agent, fetch as tlsFetch } from 'undici';
import { verifyWebhookSignature } from '../../src/alerts/webhook-signature';
import { readCompose, readEnvFile, serviceEnv } from '../../tools/compose-env';
import { ensureCaddy } from '../../tools/dev-tools';
import { freePort, spawnManaged, type ManagedProcess } from '../../tools/stack';
import { PASSWORD, uniqueEmail } from '../support/accounts';
import { Receiver } from '../support/receiver';

// The production path as docker-compose.yml deploys it, run natively because no container engine
// runs here: `npm run build`, the evidence-key job's command, then dist/'s API and worker with
// NODE_ENV=production and the environment the compose file gives them from a .env made of
// .env.example, behind Caddy running deploy/Caddyfile, on a Temporal server of the compose file's
// version and the embedded database. What differs is only what a Docker network would name
// differently: addresses and ports (the services' host names, the proxy's fixed address → 127.0.0.2),
// the data folders, and outgoing deliveries being allowed to the loopback receiver.
const compose = readCompose();
const dockerfile = readFileSync('Dockerfile', 'utf8');
const PROXY_ADDRESS = '127.0.0.2';
const FORGED = '203.0.113.66';
const SECRET = 'production-rehearsal-webhook-secret';
const output: string[] = [];
const processes: ManagedProcess[] = [];

let dir: string;
let receiver: Receiver;
let tls: Agent;
let urls: { api: string; tripwire: string; directTripwire: string };
let api: ManagedProcess;
let worker: ManagedProcess;
let dotenv: Record<string, string>;

/** `cp .env.example .env`, then the required values filled in as .env.example asks. */
function dotenvForRehearsal(): Record<string, string> {
  return {
    ...readEnvFile('.env.example'),
    API_DOMAIN: 'localhost',
    TRIPWIRE_DOMAIN: '127.0.0.1',
    CADDY_TLS: 'internal',
    TEMPORAL_DB_PASSWORD: randomBytes(18).toString('base64url'),
    METRICS_TOKEN: randomBytes(24).toString('hex'),
  };
}

/** Each started process's name in `output`, for the error when it fails to start. */
const names = new Map<ManagedProcess, string>();

/** A compose service's command, run from this clone (the image's WORKDIR /app is the clone). */
function start(name: string, command: string[], env: NodeJS.ProcessEnv): ManagedProcess {
  const [program, ...args] = command;
  const proc = spawnManaged(program === 'node' ? process.execPath : program!, args, {
    env,
    onLine: (line) => output.push(`${name} | ${line}`),
  });
  names.set(proc, name);
  processes.push(proc);
  return proc;
}

async function until(what: string, proc: ManagedProcess, check: () => Promise<boolean>) {
  let exited: number | null | undefined;
  void proc.exited.then((code) => (exited = code));
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (exited !== undefined) {
      const own = output.filter((line) => line.startsWith(`${names.get(proc)} | `));
      const last = own.slice(-20).join('\n');
      throw new Error(`${what}: exited (${exited}) before it was ready; its last output:\n${last}`);
    }
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what}: not ready in time`);
}

const https = (url: string, init: Parameters<typeof tlsFetch>[1] = {}) =>
  tlsFetch(url, { ...init, dispatcher: tls });

async function call(path: string, init: { method?: string; body?: unknown; token?: string } = {}) {
  const res = await https(`${urls.api}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      'content-type': 'application/json',
      ...(init.token && { authorization: `Bearer ${init.token}` }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as unknown };
}

beforeAll(async () => {
  const build = spawnSync('npm', ['run', 'build'], { encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);

  dir = await mkdtemp(join(tmpdir(), 'tripwire-production-'));
  receiver = await Receiver.start();
  dotenv = dotenvForRehearsal();
  const ports = {
    https: await freePort(),
    http: await freePort(),
    api: await freePort(),
    tripwire: await freePort(),
    worker: await freePort(),
  };
  urls = {
    api: `https://localhost:${ports.https}`,
    tripwire: `https://127.0.0.1:${ports.https}`,
    directTripwire: `http://127.0.0.1:${ports.tripwire}`,
  };
  // The proxy first, so that it holds its ports from here on: a port found free can be taken by
  // any connection's local port before it is bound, and the API and the worker take seconds to
  // start. Until they are up it answers 502.
  const caddyHome = join(dir, 'caddy');
  const proxy = start(
    'proxy',
    [
      await ensureCaddy(() => undefined),
      'run',
      '--config',
      'deploy/Caddyfile',
      '--adapter',
      'caddyfile',
    ],
    {
      ...process.env,
      ...serviceEnv(compose.services.proxy!, dotenv),
      HTTPS_PORT: String(ports.https),
      HTTP_PORT: String(ports.http),
      API_UPSTREAM: `127.0.0.1:${ports.api}`,
      TRIPWIRE_UPSTREAM: `127.0.0.1:${ports.tripwire}`,
      PROXY_SOURCE_ADDRESS: PROXY_ADDRESS,
      XDG_DATA_HOME: caddyHome,
      XDG_CONFIG_HOME: caddyHome,
    },
  );
  const caddyRoot = join(caddyHome, 'caddy', 'pki', 'authorities', 'local', 'root.crt');
  // Caddy makes its CA (and so the root the client trusts) as it starts.
  await until('proxy CA', proxy, () => Promise.resolve(existsSync(caddyRoot)));
  tls = new Agent({ connect: { ca: readFileSync(caddyRoot) } });

  const key = join(dir, 'keys', 'evidence.key');

  // The evidence-key job: its command, with its volume's path here.
  const job = compose.services['evidence-key']!;
  const composeKey = job.command![job.command!.indexOf('--file') + 1]!;
  const made = spawnSync(
    process.execPath,
    job.command!.slice(1).map((arg) => (arg === composeKey ? key : arg)),
    { env: { ...process.env, ...serviceEnv(job, dotenv) }, encoding: 'utf8' },
  );
  if (made.status !== 0) throw new Error(`evidence-key job failed: ${made.stderr}`);
  output.push(`evidence-key | ${made.stderr.trim()}`);

  const nodeEnv = /^ENV NODE_ENV=(\w+)$/m.exec(dockerfile)![1]!;
  const network = (composeEnv: Record<string, string>, own: Record<string, string>) => ({
    ...process.env,
    ...composeEnv,
    NODE_ENV: nodeEnv,
    MONGODB_URI: process.env.MONGODB_URI!,
    MONGODB_DB: `production_${randomUUID().replace(/-/g, '').slice(0, 12)}`,
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS!,
    ...own,
  });
  const apiEnv = serviceEnv(compose.services.api!, dotenv);
  const queue = `production-${randomUUID()}`;
  const shared = {
    TEMPORAL_TASK_QUEUE: queue,
    // The receiver listens on loopback, which production refuses as a delivery target.
    ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
  };
  const apiProcessEnv = network(apiEnv, {
    ...shared,
    HOST: '127.0.0.1',
    PORT: String(ports.api),
    TRIPWIRE_PORT: String(ports.tripwire),
    DECOY_SMTP_PORT: '0',
    PUBLIC_BASE_URL: urls.api,
    PUBLIC_TRIPWIRE_URL: urls.tripwire,
    // The proxy's address on `front` becomes the one Caddy connects from here; any other value (a
    // hop count, another address) is rehearsed as the compose file has it.
    TRUST_PROXY:
      apiEnv.TRUST_PROXY === proxyAddressInCompose() ? PROXY_ADDRESS : apiEnv.TRUST_PROXY!,
    TRIPWIRE_JOURNAL_DIR: join(dir, 'journal'),
    // The job's file, at its path here; a key the compose file named some other way is used as is.
    EVIDENCE_SIGNING_KEY:
      apiEnv.EVIDENCE_SIGNING_KEY === composeKey ? key : apiEnv.EVIDENCE_SIGNING_KEY!,
  });
  api = start('api', compose.services.api!.command!, apiProcessEnv);
  await until('api', api, async () => (await fetch(`http://127.0.0.1:${ports.api}/readyz`)).ok);

  worker = start(
    'worker',
    compose.services.worker!.command!,
    network(serviceEnv(compose.services.worker!, dotenv), {
      ...shared,
      MONGODB_DB: apiProcessEnv.MONGODB_DB,
      HOST: '127.0.0.1',
      WORKER_METRICS_PORT: String(ports.worker),
    }),
  );
  await until(
    'worker',
    worker,
    async () => (await fetch(`http://127.0.0.1:${ports.worker}/healthz`)).ok,
  );

  await until('proxy', proxy, async () => (await https(`${urls.api}/readyz`)).ok);
}, 600_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  await receiver?.stop();
  await tls?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  if (process.env.TEST_SERVER_LOGS) console.log(output.join('\n'));
});

function proxyAddressInCompose(): string {
  const networks = compose.services.proxy!.networks as Record<string, { ipv4_address: string }>;
  return networks.front!.ipv4_address;
}

/** An account with a signed webhook to the receiver, and a URL canary planted through the proxy. */
async function accountWithCanary(path: string) {
  const credentials = { email: uniqueEmail(), password: PASSWORD };
  expect((await call('/api/auth/signup', { method: 'POST', body: credentials })).status).toBe(201);
  const { token } = (await call('/api/auth/login', { method: 'POST', body: credentials })).body as {
    token: string;
  };
  const channel = await call('/api/alert-channels', {
    method: 'POST',
    token,
    body: { kind: 'webhook', name: 'rehearsal', url: receiver.url(path), secret: SECRET },
  });
  expect(channel.status).toBe(201);
  const canary = await call('/api/canaries', {
    method: 'POST',
    token,
    body: { kind: 'url', memo: `rehearsal ${path}` },
  });
  expect(canary.status).toBe(201);
  const { canary_id, value } = canary.body as { canary_id: string; value: string };
  return { token, canaryId: canary_id, url: new URL(value) };
}

/** The sealed hits of one canary, once there are any. */
async function sealedHits(token: string, canaryId: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { body } = await call(`/api/threat-log?canary_id=${canaryId}`, { token });
    const hits = (body as { hits: { source: { ip: string }; evidence: { seq: number } }[] }).hits;
    if (hits.length || Date.now() > deadline) return hits;
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('npm run test:production: the compose deployment, natively', () => {
  it('when deployed from the documented steps, then it runs the Temporal server the compose file names and is ready over TLS', async () => {
    const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
    const info = await connection.workflowService.getSystemInfo({});
    await connection.close();
    expect(info.serverVersion).toBe(compose.services.temporal!.image!.split(':')[1]);
    expect((await https(`${urls.api}/readyz`)).status).toBe(200);
    expect((await https(`${urls.api}/console/`)).status).toBe(200);
    // The public tripwire site serves tripwires only.
    expect((await https(`${urls.tripwire}/api/canaries`)).status).toBe(404);
  });

  it('when /metrics is asked through the proxy, then only the METRICS_TOKEN gets in', async () => {
    expect((await https(`${urls.api}/metrics`)).status).toBe(401);
    const scraped = await https(`${urls.api}/metrics`, {
      headers: { authorization: `Bearer ${dotenv.METRICS_TOKEN}` },
    });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('# TYPE');
  });

  it("when a canary fires through the proxy with a forged X-Forwarded-For, then the alert reaches the receiver signed and the client's real address is sealed", async () => {
    const { token, canaryId, url } = await accountWithCanary('/through-proxy');
    expect(url.origin).toBe(urls.tripwire);
    const fired = await https(url.href, { headers: { 'x-forwarded-for': FORGED } });
    expect(fired.status).toBe(200);

    const [hit] = await receiver.waitFor('/through-proxy');
    const check = verifyWebhookSignature(SECRET, {
      rawBody: hit!.rawBody,
      timestamp: String(hit!.headers['x-service-timestamp']),
      signature: String(hit!.headers['x-service-signature']),
    });
    expect(check).toEqual({ ok: true });
    const payload = JSON.parse(hit!.rawBody.toString()) as { data: { attacker: { ip: string } } };
    expect(payload.data.attacker.ip).toBe('127.0.0.1');

    const sealed = await sealedHits(token, canaryId);
    // 127.0.0.1, not the forged address, and not the proxy's own 127.0.0.2: the API took the
    // address from the proxy's X-Forwarded-For, which Caddy set to the client's.
    expect(sealed.map((h) => h.source.ip)).toEqual(['127.0.0.1']);
  });

  it('when a forged X-Forwarded-For is sent to the API directly, then it is ignored: the sender is not the proxy', async () => {
    const { token, canaryId, url } = await accountWithCanary('/direct');
    const fired = await fetch(`${urls.directTripwire}${url.pathname}`, {
      headers: { 'x-forwarded-for': FORGED },
    });
    expect(fired.status).toBe(200);
    const sealed = await sealedHits(token, canaryId);
    expect(sealed.map((h) => h.source.ip)).toEqual(['127.0.0.1']);
  });

  it('when a secret in .env is still a placeholder, then the API refuses to start and names it', async () => {
    const refused = start('api-placeholder', compose.services.api!.command!, {
      ...process.env,
      ...serviceEnv(compose.services.api!, { ...dotenv, TEMPORAL_DB_PASSWORD: 'change-me' }),
    });
    expect(await refused.exited).toBe(1);
    expect(output.join('\n')).toMatch(
      /api-placeholder \| +TEMPORAL_DB_PASSWORD: "change-me" is a placeholder/,
    );
  });

  it('when stopped as Docker stops a container (SIGTERM), then the API and the worker exit cleanly', async () => {
    await Promise.all([api.stop(), worker.stop()]);
    expect([api.child.exitCode, api.child.signalCode]).toEqual([0, null]);
    expect([worker.child.exitCode, worker.child.signalCode]).toEqual([0, null]);
  });
});
