import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PASSWORD, uniqueEmail } from '../support/accounts';
import { Receiver } from '../support/receiver';
import { startProdLike, type ProdLikeProcess, type ProdLikeStack } from '../../tools/prod-like';

// `npm run stack:prod-like` as a test: two API processes and three worker processes on the test's
// database and Temporal, alerts fired through each API to a real HTTPS receiver, a worker killed.
let dir: string;
let stack: ProdLikeStack;
let receiver: Receiver;
const output: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tripwire-prod-like-'));
  receiver = await Receiver.start();
  stack = await startProdLike({
    dataDir: dir,
    env: {
      NODE_ENV: 'test',
      MONGODB_DB: `test_${randomUUID().replace(/-/g, '').slice(0, 16)}`,
      TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
      ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      ALERT_GATHER_MS: '0',
      COOKIE_SECURE: 'false',
      LOG_LEVEL: 'warn',
    },
    log: (source, line) => output.push(`${source} | ${line}`),
  });
}, 300_000);

afterAll(async () => {
  await stack?.stop();
  await receiver.stop();
  await rm(dir, { recursive: true, force: true });
  if (process.env.TEST_SERVER_LOGS) console.log(output.join('\n'));
});

async function call(api: ProdLikeProcess, path: string, init: RequestInit = {}, token?: string) {
  const res = await fetch(`${api.url}${path}`, {
    ...init,
    headers: {
      'content-type': 'application/json',
      ...(token && { authorization: `Bearer ${token}` }),
    },
  });
  const text = await res.text();
  return { status: res.status, body: (text.startsWith('{') ? JSON.parse(text) : {}) as never };
}

/** An account on `api` with a Discord-style channel to `path` on the receiver. */
async function accountWithChannel(api: ProdLikeProcess, path: string) {
  const email = uniqueEmail();
  const credentials = { method: 'POST', body: JSON.stringify({ email, password: PASSWORD }) };
  expect((await call(api, '/api/auth/signup', credentials)).status).toBe(201);
  const login = await call(api, '/api/auth/login', credentials);
  const token = (login.body as { token: string }).token;
  const channel = await call(
    api,
    '/api/alert-channels',
    {
      method: 'POST',
      body: JSON.stringify({ kind: 'discord', name: path, url: receiver.url(path) }),
    },
    token,
  );
  expect(channel.status).toBe(201);
  return { token, channelId: (channel.body as { id: string }).id };
}

/** Plants a URL canary through `api` and fetches it there: one threat event, one alert. */
async function fire(api: ProdLikeProcess, token: string) {
  const canary = await call(
    api,
    '/api/canaries',
    { method: 'POST', body: JSON.stringify({ kind: 'url', memo: `through ${api.name}` }) },
    token,
  );
  expect(canary.status).toBe(201);
  const { pathname } = new URL((canary.body as { value: string }).value);
  expect((await fetch(`${api.url}${pathname}`)).status).toBe(200);
}

interface Delivery {
  deliveryId: string;
  outcome: string | null;
}

/** The channel's deliveries once `count` of them have an outcome (or whatever there is in time). */
async function finished(api: ProdLikeProcess, token: string, channelId: string, count: number) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { body } = await call(api, `/api/alert-channels/${channelId}/deliveries`, {}, token);
    const deliveries = (body as { deliveries: Delivery[] }).deliveries;
    if (deliveries.filter((d) => d.outcome).length >= count || Date.now() > deadline) {
      return deliveries;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Delivery ids the receiver got on `path`, with how often each came. */
function receivedOn(path: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const hit of receiver.hitsOn(path)) {
    const id = String(hit.headers['x-service-delivery']);
    counts[id] = (counts[id] ?? 0) + 1;
  }
  return counts;
}

describe('npm run stack:prod-like', () => {
  it('when it starts, then two APIs are ready and three workers report healthy', async () => {
    expect(stack.apis).toHaveLength(2);
    expect(stack.workers).toHaveLength(3);
    for (const api of stack.apis) expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
    for (const w of stack.workers) expect((await fetch(`${w.url}/healthz`)).status).toBe(200);
  });

  it('when an alert is fired through each API, then each is delivered exactly once', async () => {
    for (const [i, api] of stack.apis.entries()) {
      const path = `/round-1/api-${i + 1}`;
      const { token, channelId } = await accountWithChannel(api, path);
      await fire(api, token);
      const deliveries = await finished(api, token, channelId, 1);
      expect(deliveries.map((d) => d.outcome)).toEqual(['delivered']);
      expect(receivedOn(path)).toEqual({ [deliveries[0]!.deliveryId]: 1 });
    }
  });

  it('when a worker is killed with alerts under way, then the other workers deliver every one of them', async () => {
    const accounts = await Promise.all(
      stack.apis.map(async (api, i) => ({
        api,
        path: `/round-2/api-${i + 1}`,
        ...(await accountWithChannel(api, `/round-2/api-${i + 1}`)),
      })),
    );
    const perApi = 3;
    for (const { api, token } of accounts) {
      for (let n = 0; n < perApi; n++) await fire(api, token);
    }
    const [victim, ...survivors] = stack.workers as [ProdLikeProcess, ...ProdLikeProcess[]];
    process.kill(victim.proc.child.pid!, 'SIGKILL');
    await victim.proc.exited;
    expect(victim.proc.child.signalCode).toBe('SIGKILL');

    for (const { api, token, channelId, path } of accounts) {
      const deliveries = await finished(api, token, channelId, perApi);
      expect(deliveries.map((d) => d.outcome)).toEqual(Array(perApi).fill('delivered'));
      // Each alert reached the receiver under its one delivery id. A worker killed between its
      // POST and recording the attempt makes the retry send the same delivery id again, which is
      // what X-Service-Delivery is for: receivers drop the repeat.
      const received = receivedOn(path);
      expect(Object.keys(received).sort()).toEqual(deliveries.map((d) => d.deliveryId).sort());
    }
    for (const w of survivors) expect((await fetch(`${w.url}/healthz`)).status).toBe(200);
  });

  it('when the dashboard queries metrics, then the APIs and workers export every one of them', async () => {
    const dashboard = JSON.parse(readFileSync('docs/grafana-dashboard.json', 'utf8')) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    // Metric names in PromQL stand before a selector or a range: `name{…}`, `name[5m]`.
    const queried = dashboard.panels.flatMap((p) =>
      p.targets.flatMap((t) => {
        const names = [...t.expr.matchAll(/([a-z_:][a-z0-9_:]*)(?=\{|\[)/g)].map((m) => m[1]!);
        expect([p.title, names.length > 0]).toEqual([p.title, true]);
        return names;
      }),
    );
    const survivors = stack.workers.filter((w) => w.proc.child.signalCode === null);
    const scrape = async () =>
      new Set(
        (
          await Promise.all(
            [stack.apis[0]!, ...survivors].map(async (p) =>
              (await fetch(`${p.url}/metrics`)).text(),
            ),
          )
        ).flatMap(metricNames),
      );
    // The SDK exports a counter only once it has counted. Deliveries no longer fail their activity
    // (an attempt reports the receiver's answer; the workflow decides on a retry), so the activity
    // failure counter appears only when an activity itself breaks, which this run does not provoke.
    const onlyAfterAnActivityFails = new Set(['temporal_activity_execution_failed_total']);
    const { token } = await accountWithChannel(stack.apis[0]!, '/status/503');
    await fire(stack.apis[0]!, token);
    // Alerts send and record through local activities; the activity panels also need one that is
    // scheduled on the task queue, which a worker ping is.
    expect(
      (await call(stack.apis[0]!, '/api/diagnostics/worker-ping', { method: 'POST' }, token))
        .status,
    ).toBe(200);
    let exported = await scrape();
    for (let i = 0; i < 60 && !exported.has('temporal_workflow_completed_total'); i++) {
      await new Promise((r) => setTimeout(r, 250));
      exported = await scrape();
    }
    // The worker's endpoint carries the Temporal SDK's metrics beside its own.
    expect([...exported].some((name) => name.startsWith('temporal_'))).toBe(true);
    const missing = [...new Set(queried)].filter((name) => !exported.has(name));
    expect(missing.filter((name) => !onlyAfterAnActivityFails.has(name))).toEqual([]);
  });
});

/** Every series name a Prometheus text exposition declares (histograms with their three series). */
function metricNames(text: string): string[] {
  return text.split('\n').flatMap((line) => {
    const typed = /^# TYPE (\S+) (\S+)/.exec(line);
    if (typed) {
      const [, name, type] = typed as unknown as [string, string, string];
      return type === 'histogram'
        ? [name, `${name}_bucket`, `${name}_sum`, `${name}_count`]
        : [name];
    }
    return line && !line.startsWith('#') ? [/^[^{\s]+/.exec(line)![0]] : [];
  });
}
