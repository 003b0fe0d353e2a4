import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import * as dnsPacket from 'dns-packet';
import { Client } from 'pg';
import request from 'supertest';
import { parse as parseYaml } from 'yaml';
import {
  startPublicListeners,
  type PublicListeners,
} from '../../src/canaries/listeners/public-listeners';
import { threatEventListView } from '../../src/canaries/threats.routes';
import { bearer, canaryAccounts } from '../support/canary-accounts';
import { until } from '../support/process-stack';
import { Receiver } from '../support/receiver';
import { createTestApp, testConfig, testLogger, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';

const ZONE = 'canary.example.com';

let t: TestApp;
let worker: { stop(): Promise<void> };
let receiver: Receiver;
let listeners: PublicListeners;
let tripwireBase: string;
let accounts: ReturnType<typeof canaryAccounts>;

/** A port that was free a moment ago: planted URLs must name the port before the listener starts. */
async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  const [tripwirePort, postgresPort] = [await freePort(), await freePort()];
  tripwireBase = `http://127.0.0.1:${tripwirePort}`;
  t = await createTestApp({
    config: testConfig({
      ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      ALERT_GATHER_MS: '500',
      TRIPWIRE_HOST: '127.0.0.1',
      TRIPWIRE_PORT: String(tripwirePort),
      PUBLIC_TRIPWIRE_URL: tripwireBase,
      PUBLIC_HOST: '127.0.0.1',
      DECOY_POSTGRES_PORT: String(postgresPort),
      DECOY_SMTP_PORT: '0',
      CANARY_DNS_DOMAIN: ZONE,
      DNS_PORT: '0',
      DNS_ANSWER_IPV4: '192.0.2.10',
    }),
  });
  listeners = await startPublicListeners(t.config, t, testLogger(t.config));
  worker = await startTestWorker(t.mongo.db, t.config.TEMPORAL_TASK_QUEUE);
  receiver = await Receiver.start();
  accounts = canaryAccounts(t.app, receiver);
});
afterAll(async () => {
  await listeners.close();
  await worker.stop();
  await receiver.stop();
  await t.close();
});

/** The sealed hit behind an alert checks out publicly, and the canary counts it. */
async function expectSealedAndCounted(who: Parameters<typeof bearer>[0], canaryId: string) {
  const hits = await accounts.hitsOf(who, canaryId);
  const [hit] = hits;
  const sealed = await request(t.app).get(`/api/verify/${hit!.evidence.content_hash}`);
  expect(sealed.body).toMatchObject({ exists: true, intact: true });
  // The canary's tally is written just after the hit log.
  const canary = await until(
    `${canaryId} counts its hits`,
    async () => {
      const res = await request(t.app).get(`/api/canaries/${canaryId}`).set(bearer(who));
      return res.body.hit_count === hits.length ? (res.body as object) : undefined;
    },
    15_000,
  );
  expect(canary).toMatchObject({ hit_count: hits.length, last_hit_at: hit!.at });
  return hit!;
}

function dnsResolver(): Resolver {
  const resolver = new Resolver({ timeout: 2_000, tries: 2 });
  resolver.setServers([`127.0.0.1:${listeners.ports.dns}`]);
  return resolver;
}

/** One query over DNS-over-TCP (RFC 7766 framing), as a resolver falling back to TCP sends it. */
async function queryOverTcp(name: string, prefix: Buffer = Buffer.alloc(0)) {
  const socket = connect(listeners.ports.dns!, '127.0.0.1');
  const query = dnsPacket.streamEncode({
    type: 'query',
    id: 4242,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: 'A', name }],
  });
  socket.write(Buffer.concat([prefix, query]));
  let data = Buffer.alloc(0);
  for await (const chunk of socket) {
    data = Buffer.concat([data, chunk as Buffer]);
    if (data.length >= 2 && data.length >= 2 + data.readUInt16BE(0)) break;
  }
  socket.destroy();
  return dnsPacket.streamDecode(data);
}

describe('a DNS canary', () => {
  it('when its name is looked up, then the resolver is recorded as the relay and a signed alert says which canary', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'dns', { memo: 'hostname in the backup script' });
    expect(canary.value).toMatch(new RegExp(`^[a-z2-7]{20}\\.${ZONE.replace(/\./g, '\\.')}$`));

    const live = await dnsResolver().resolve4(canary.value.toUpperCase());
    const unknown = await dnsResolver().resolve4(`nothing-planted.${ZONE}`);
    expect(live).toEqual(['192.0.2.10']);
    expect(unknown).toEqual(live);

    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data).toMatchObject({
      canaryId: canary.canary_id,
      canaryKind: 'dns',
      memo: 'hostname in the backup script',
      platform: 'dns',
      attacker: { ip: '' },
      resolver: { ip: '127.0.0.1' },
    });
    expect(alert!.data.interpretation).toContain('"hostname in the backup script"');
    const hit = await expectSealedAndCounted(who, canary.canary_id);
    expect(hit.source).toMatchObject({ ip: '', via: 'dns' });
    const events = threatEventListView.parse(
      (await request(t.app).get('/api/threat-events').set(bearer(who))).body,
    );
    expect(events.threat_events[0]!.alert).toMatchObject({ memo: 'hostname in the backup script' });
  });

  it('when it is looked up over TCP, then it fires the same way and the answer is the same', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'dns');
    const answer = await queryOverTcp(canary.value);
    expect(answer).toMatchObject({ id: 4242, answers: [{ type: 'A', data: '192.0.2.10' }] });
    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data.canaryId).toBe(canary.canary_id);
  });

  it('when a name outside the zone is asked, then the answer is REFUSED and nothing fires', async () => {
    await expect(dnsResolver().resolve4('example.org')).rejects.toMatchObject({
      code: 'EREFUSED',
    });
  });
});

describe('a database URL canary', () => {
  it('when a Postgres client connects with it, then it gets an authentication failure and the owner an alert', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'database_url', { platform: 'build box' });
    const url = new URL(canary.value);
    expect(url).toMatchObject({ hostname: '127.0.0.1', port: String(listeners.ports.postgres) });

    const client = new Client({ connectionString: canary.value, application_name: 'deploy.py' });
    await expect(client.connect()).rejects.toMatchObject({
      code: '28P01',
      message: `password authentication failed for user "${url.username}"`,
    });
    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data).toMatchObject({
      canaryId: canary.canary_id,
      platform: 'build box',
      memo: 'database_url in the test',
      attacker: { ip: '127.0.0.1', type: 'internal' },
    });
    const hit = await expectSealedAndCounted(who, canary.canary_id);
    expect(hit.source).toMatchObject({
      via: 'postgres',
      user_agent: expect.stringMatching(/^deploy\.py /),
    });
  });

  it('when psql connects with it, then psql reports the ordinary failure and it fires', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'database_url');
    const psql = promisify(execFile)('psql', [canary.value, '-c', 'select 1'], {
      env: { ...process.env, PGCONNECT_TIMEOUT: '5' },
    });
    await expect(psql).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('password authentication failed'),
    });
    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data.canaryId).toBe(canary.canary_id);
  });

  it('when a client tries a password nobody planted, then it gets the same failure and nothing fires', async () => {
    const port = listeners.ports.postgres!;
    const client = new Client({
      connectionString: `postgres://admin:hunter2@127.0.0.1:${port}/prod`,
    });
    await expect(client.connect()).rejects.toMatchObject({ code: '28P01' });
  });
});

describe('a cloud key canary with its profile', () => {
  it('when the AWS SDK calls STS GetCallerIdentity with the planted profile, then it fires', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'aws_access_key', { memo: 'prod .env on build box' });
    const home = mkdtempSync(join(tmpdir(), 'aws-profile-'));
    const [credentials, config] = canary.files!;
    expect([credentials!.path, config!.path]).toEqual(['~/.aws/credentials', '~/.aws/config']);
    writeFileSync(join(home, 'credentials'), credentials!.content);
    writeFileSync(join(home, 'config'), config!.content);

    const saved = { ...process.env };
    for (const name of Object.keys(process.env))
      if (name.startsWith('AWS_')) delete process.env[name];
    process.env.AWS_SHARED_CREDENTIALS_FILE = join(home, 'credentials');
    process.env.AWS_CONFIG_FILE = join(home, 'config');
    try {
      const sts = new STSClient({ maxAttempts: 1 });
      await expect(sts.send(new GetCallerIdentityCommand({}))).rejects.toMatchObject({
        name: 'InvalidClientTokenId',
        $metadata: { httpStatusCode: 403 },
      });
      sts.destroy();
    } finally {
      process.env = saved;
    }
    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data).toMatchObject({
      canaryId: canary.canary_id,
      memo: 'prod .env on build box',
      platform: 'aws-sdk-js',
    });
    expect(alert!.data.interpretation).toContain('"prod .env on build box"');
    const hit = await expectSealedAndCounted(who, canary.canary_id);
    expect(hit.source.via).toBe('aws_api');
  });
});

describe('a kubeconfig canary', () => {
  it('when a client sends what kubectl sends, then it gets the API server 401 and it fires', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'kubeconfig');
    const kubeconfig = parseYaml(canary.value) as {
      clusters: { cluster: { server: string } }[];
      users: { user: { token: string } }[];
    };
    const server = kubeconfig.clusters[0]!.cluster.server;
    expect(server).toBe(`${tripwireBase}/k8s`);
    const kubectl = (token: string) =>
      fetch(`${server}/api?timeout=32s`, {
        headers: {
          Authorization: `Bearer ${token}`,
          'User-Agent': 'kubectl/v1.31.0 (linux/amd64) kubernetes/9edcffc',
          Accept:
            'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
        },
      });
    const fired = await kubectl(kubeconfig.users[0]!.user.token);
    const other = await kubectl('not-a-canary');
    expect(fired.status).toBe(401);
    const body = await fired.json();
    expect(body).toEqual(await other.json());
    expect(body).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });

    const [alert] = await accounts.alertsAt(path);
    expect(alert!.data).toMatchObject({ canaryId: canary.canary_id, platform: 'kubectl' });
    const hit = await expectSealedAndCounted(who, canary.canary_id);
    expect(hit.source.via).toBe('kubernetes_api');
  });
});

describe('the public tripwire listener', () => {
  it('when a URL tripwire comes with a bad X-API-Key, then it still answers the ordinary page and fires', async () => {
    const { who, path } = await accounts.account();
    const canary = await accounts.plant(who, 'url');
    expect(canary.value.startsWith(`${tripwireBase}/r/`)).toBe(true);
    const fired = await fetch(canary.value, { headers: { 'X-API-Key': 'svc_bad_key' } });
    const viaApi = await request(t.app)
      .get(new URL(canary.value).pathname)
      .set('X-API-Key', 'svc_bad_key');
    expect(fired.status).toBe(200);
    expect(viaApi.status).toBe(200);
    expect(await fired.text()).toBe(viaApi.text);
    const alerts = await accounts.alertsAt(path);
    expect(alerts[0]!.data.canaryId).toBe(canary.canary_id);
  });

  it.each(['/api/canaries', '/metrics', '/docs', '/openapi.json', '/console/', '/healthz'])(
    'when %s is asked of the tripwire listener, then it is not there',
    async (route) => {
      const res = await fetch(`${tripwireBase}${route}`);
      expect(res.status).toBe(404);
      expect(await res.text()).toBe('Not Found');
    },
  );
});

describe('listeners under garbage (fuzz)', () => {
  /** Deterministic bytes, so a failure can be replayed. */
  function randomBytesFrom(seed: number, length: number): Buffer {
    let state = seed >>> 0;
    return Buffer.from(
      Array.from({ length }, () => {
        state = (Math.imul(state ^ (state >>> 15), 2246822507) + 0x9e3779b9) >>> 0;
        return state & 0xff;
      }),
    );
  }
  const HTTP_REQUEST = Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n');

  /** Sends raw bytes to a TCP port, and waits until the listener answers or hangs up. */
  async function sendRaw(port: number, bytes: Buffer): Promise<Buffer> {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(3_000, () => socket.destroy());
    socket.end(bytes);
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of socket) chunks.push(chunk as Buffer);
    } catch {
      // A reset is one way to refuse garbage.
    }
    return Buffer.concat(chunks);
  }

  it('when the DNS listener gets truncated, oversized, random and non-DNS input, then it keeps answering', async () => {
    const udp = createSocket('udp4');
    const valid = dnsPacket.encode({
      type: 'query',
      id: 7,
      questions: [{ type: 'A', name: `x.${ZONE}` }],
    });
    const junk = [
      ...Array.from({ length: valid.length }, (_, n) => valid.subarray(0, n)),
      ...Array.from({ length: 50 }, (_, seed) => randomBytesFrom(seed, 12 + seed * 7)),
      randomBytesFrom(99, 60_000),
      HTTP_REQUEST,
      dnsPacket.encode({ type: 'response', id: 1, questions: [{ type: 'A', name: `x.${ZONE}` }] }),
    ];
    for (const bytes of junk) udp.send(bytes, listeners.ports.dns, '127.0.0.1');
    for (const bytes of [HTTP_REQUEST, randomBytesFrom(5, 70_000), Buffer.from([0xff, 0xff, 1])]) {
      await sendRaw(listeners.ports.dns!, bytes);
    }
    udp.close();
    await expect(dnsResolver().resolve4(`still-serving.${ZONE}`)).resolves.toEqual(['192.0.2.10']);
    await expect(queryOverTcp(`still-serving.${ZONE}`)).resolves.toMatchObject({ id: 4242 });
  });

  it('when the Postgres listener gets truncated, oversized, random and non-Postgres input, then it keeps answering', async () => {
    const port = listeners.ports.postgres!;
    const startup = Buffer.concat([
      Buffer.from([0, 0, 0, 41, 0, 3, 0, 0]),
      Buffer.from('user\0svc\0database\0production\0\0'),
    ]);
    const junk = [
      ...Array.from({ length: startup.length }, (_, n) => startup.subarray(0, n)),
      Buffer.from([0x7f, 0xff, 0xff, 0xff, 0, 3, 0, 0]),
      Buffer.from([0xff, 0xff, 0xff, 0xf0, 0, 3, 0, 0]),
      Buffer.concat([startup, Buffer.from([0x70, 0x7f, 0xff, 0xff, 0xff])]),
      Buffer.concat([startup, Buffer.from('Q\0\0\0\x0dselect 1\0')]),
      randomBytesFrom(3, 200_000),
      HTTP_REQUEST,
      ...Array.from({ length: 20 }, (_, seed) => randomBytesFrom(seed, 8 + seed * 13)),
    ];
    for (const bytes of junk) {
      const answer = await sendRaw(port, bytes);
      // Never more than an authentication request and one error: nothing else leaks out.
      expect(answer.length).toBeLessThan(200);
    }
    const client = new Client({ connectionString: `postgres://a:b@127.0.0.1:${port}/c` });
    await expect(client.connect()).rejects.toMatchObject({ code: '28P01' });
  });

  it('when the decoy AWS and Kubernetes APIs get malformed credentials and non-HTTP input, then they keep answering', async () => {
    const port = listeners.ports.tripwire!;
    const headers = [
      'AWS4-HMAC-SHA256',
      'AWS4-HMAC-SHA256 Credential=',
      `AWS4-HMAC-SHA256 Credential=${'A'.repeat(5000)}/x/y/sts/aws4_request`,
      'Bearer',
      'Basic %%%',
      `Bearer ${'x'.repeat(8000)}`,
      randomBytesFrom(1, 300)
        .toString('latin1')
        .replace(/[\r\n\0]/g, ' '),
    ];
    for (const route of ['/aws/', '/k8s/api']) {
      for (const authorization of headers) {
        const res = await fetch(`${tripwireBase}${route}`, {
          method: 'POST',
          headers: { authorization },
          body: randomBytesFrom(2, 1000),
        }).catch(() => null);
        expect([401, 403, 431, null]).toContain(res?.status ?? null);
      }
    }
    await sendRaw(port, randomBytesFrom(4, 50_000));
    await sendRaw(port, Buffer.from('\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03'));
    expect((await fetch(`${tripwireBase}/k8s/api`)).status).toBe(401);
    expect((await fetch(`${tripwireBase}/aws/`, { method: 'POST' })).status).toBe(403);
    expect((await fetch(`${tripwireBase}/r/${randomUUID()}`)).status).toBe(200);
  });
});
