/**
 * Fault suite, real processes: two APIs and a worker run as child processes (`node --import tsx
 * src/main.ts` / `src/worker.ts`, as `npm run dev` starts them) on a database and a Temporal dev
 * server of this file's own. Each case kills one of them (SIGKILL or SIGTERM) and starts it again
 * while URL tripwires are fetched on both APIs and channel tests run, then checks that every
 * answered hit is recorded and sealed, every threat event alerted exactly once on its channel
 * (by delivery id at the receiver, plus at most one storm follow-up) and every delivery outcome
 * true. Prints Fault | Fired | Lost.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import {
  freePort,
  spawnManaged,
  startLocalMongo,
  startLocalTemporal,
  type LocalMongo,
  type ManagedProcess,
  type Service,
} from '../../tools/stack';
import { DELIVERY_ID_HEADER } from '../../src/alerts/providers/provider';
import { PASSWORD, uniqueEmail } from '../support/accounts';
import { Receiver } from '../support/receiver';

const ROOT = resolve(__dirname, '../..');
const table = ['| Fault | Fired | Lost |', '|---|---|---|'];
const logs: string[] = [];

interface Node {
  entry: string;
  env: Record<string, string>;
  proc: ManagedProcess;
}

let dataDir: string;
let mongo: LocalMongo;
let temporal: Service & { process: ManagedProcess };
let receiver: Receiver;
let client: MongoClient;
let db: Db;
let env: Record<string, string>;
const apis: (Node & { port: number })[] = [];
let worker: Node;

function spawnNode(entry: string, extra: Record<string, string>): ManagedProcess {
  return spawnManaged(process.execPath, ['--import', 'tsx', join(ROOT, entry)], {
    env: { ...process.env, ...env, ...extra },
    onLine: (line) => {
      logs.push(`[${entry} ${extra.PORT ?? ''}] ${line}`);
      if (process.env.FAULT_LOGS) console.log(logs.at(-1));
    },
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value (not undefined); fails with `what` after `ms`. */
async function until<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  ms = 90_000,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await Promise.resolve()
      .then(check)
      .catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await sleep(250);
  }
}

const api = (n: number, path: string) => `http://127.0.0.1:${apis[n]!.port}${path}`;

async function startApi(n: number): Promise<void> {
  const node = apis[n]!;
  node.proc = spawnNode(node.entry, node.env);
  await until(`API ${n} answers`, async () => (await fetch(api(n, '/healthz'))).ok || undefined);
}

async function startWorker(): Promise<void> {
  worker.proc = spawnNode(worker.entry, worker.env);
  await until('a worker polls', async () => (await fetch(api(0, '/readyz'))).ok || undefined);
}

async function kill(proc: ManagedProcess, signal: NodeJS.Signals): Promise<void> {
  process.kill(-proc.child.pid!, signal);
  await proc.exited;
}

async function call(n: number, path: string, token: string | null, body?: object) {
  const res = await fetch(api(n, path), {
    method: body ? 'POST' : 'GET',
    headers: {
      'content-type': 'application/json',
      ...(token && { authorization: `Bearer ${token}` }),
    },
    body: body && JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** An account with a webhook channel for alerts and one for channel tests, and URL canaries. */
async function account(name: string, canaries: number, alertPath = `/alerts/${name}`) {
  const email = uniqueEmail();
  const signup = await call(0, '/api/auth/signup', null, { email, password: PASSWORD });
  const { token } = (await call(1, '/api/auth/login', null, { email, password: PASSWORD })) as {
    token: string;
  };
  const hook = (path: string) =>
    call(0, '/api/alert-channels', token, {
      kind: 'webhook',
      name: path,
      url: receiver.url(path),
      secret: 'fault-suite-webhook-secret',
    });
  await hook(alertPath);
  const tests = (await hook(`/tests/${name}`)).id as string;
  const tokens: string[] = [];
  for (let i = 0; i < canaries; i++) {
    const planted = await call(0, '/api/canaries', token, { kind: 'url', memo: `${name} ${i}` });
    tokens.push(new URL(planted.value as string).pathname);
  }
  return { accountId: signup.user_id as string, token, alertPath, tests, paths: tokens };
}

/** Fetches each path on each API, as curl would; the request ids of the answered ones. */
async function fire(paths: string[], onApis = [0, 1]): Promise<string[]> {
  const answered = await Promise.all(
    paths.flatMap((path) =>
      onApis.map(async (n) => {
        const id: string = randomUUID();
        try {
          const res = await fetch(api(n, path), {
            headers: { 'user-agent': 'curl/8.5.0', 'x-request-id': id },
          });
          await res.text();
          return res.status === 200 ? id : null;
        } catch {
          return null; // not answered: the process was gone
        }
      }),
    ),
  );
  return answered.filter((id): id is string => id !== null);
}

/** A channel test run through an API: its delivery id once it answers. */
async function channelTest(n: number, who: { token: string; tests: string }) {
  const answer = await call(n, `/api/alert-channels/${who.tests}/test`, who.token, {});
  return { outcome: answer.outcome, deliveryId: answer.deliveryId as string };
}

const deliveryIdsOf = (path: string) =>
  receiver.hitsOn(path).map((h) => ({
    deliveryId: String(h.headers[DELIVERY_ID_HEADER.toLowerCase()]),
    threatEventId: (JSON.parse(h.rawBody.toString()) as { data: { threatEventId: string } }).data
      .threatEventId,
  }));

/**
 * What was lost: answered hits not recorded and sealed, threat events without exactly one first
 * alert at the receiver (by delivery id; a storm's follow-up is the one other id allowed),
 * recorded outcomes that contradict what the receiver saw.
 */
async function lostOf(who: { accountId: string; alertPath: string }, answered: string[]) {
  const hits = await until('every answered hit recorded', async () => {
    const found = await db
      .collection('threat_hits')
      .find({ requestId: { $in: answered } })
      .toArray();
    return found.length === answered.length ? found : undefined;
  });
  let lost = answered.length - hits.length;
  for (const hit of hits) {
    const sealed = await db.collection('evidence').findOne({ _id: hit.evidence.logId });
    if (!sealed || sealed.contentHash !== hit.evidence.contentHash) lost++;
  }
  const events = await db.collection('threat_events').find({ accountId: who.accountId }).toArray();
  const delivered = await until('every threat event delivered', () => {
    const seen = new Set(deliveryIdsOf(who.alertPath).map((d) => d.threatEventId));
    return events.every((e) => seen.has(String(e._id))) ? deliveryIdsOf(who.alertPath) : undefined;
  });
  for (const event of events) {
    const ids = new Set(
      delivered.filter((d) => d.threatEventId === String(event._id)).map((d) => d.deliveryId),
    );
    // Leading-edge alerting: one alert at the first hit, and at most one follow-up for the rest.
    const followUps = [...ids].filter((id) => id.endsWith(':follow-up'));
    if (ids.size - followUps.length !== 1 || followUps.length > 1) lost++;
    for (const deliveryId of ids) {
      const record = await until('the delivery outcome recorded', async () => {
        const doc = await db.collection('alert_deliveries').findOne({ _id: deliveryId as never });
        return doc?.outcome ? doc : undefined;
      });
      if (record.outcome !== 'delivered') lost++;
    }
  }
  return { lost, events: events.length };
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'fault-processes-'));
  const log = (line: string) => logs.push(line);
  [mongo, temporal, receiver] = await Promise.all([
    freePort().then((port) => startLocalMongo({ dataDir, port, log })),
    freePort().then((port) => startLocalTemporal({ dataDir, port, log })),
    Receiver.start(),
  ]);
  client = await MongoClient.connect(mongo.address);
  db = client.db('faults');
  env = {
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    MONGODB_URI: mongo.address,
    MONGODB_DB: 'faults',
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: `faults-${randomUUID()}`,
    ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
    ALERT_GATHER_MS: '200',
    DECOY_SMTP_PORT: '0',
    WORKER_METRICS_PORT: '0',
    PASSWORD_HASHING_CONCURRENCY: '2',
    // Both APIs share one journal directory: each writes segments of its own.
    TRIPWIRE_JOURNAL_DIR: join(dataDir, 'journal'),
  };
  for (let n = 0; n < 2; n++) {
    const port = await freePort();
    apis.push({ entry: 'src/main.ts', env: { PORT: String(port) }, port, proc: null as never });
  }
  worker = { entry: 'src/worker.ts', env: {}, proc: null as never };
  await Promise.all([startApi(0), startApi(1)]);
  await startWorker();
}, 180_000);

afterAll(async () => {
  console.log(table.join('\n'));
  await Promise.all([...apis.map((a) => a.proc?.stop()), worker?.proc?.stop()]);
  await client?.close();
  await receiver?.stop();
  await Promise.all([temporal?.stop(), mongo?.stop()]);
}, 60_000);

jest.setTimeout(150_000);

describe('real processes killed and started again', () => {
  it('when an API is SIGKILLed right after answering hits, then its journal replays every one on restart', async () => {
    const who = await account('api-sigkill', 10);
    const answered = await fire([...who.paths, ...who.paths, ...who.paths], [0]);
    await kill(apis[0]!.proc, 'SIGKILL');
    const inDatabase = await db
      .collection('threat_hits')
      .countDocuments({ requestId: { $in: answered } });
    const test = channelTest(1, who);
    await startApi(0);
    const { lost } = await lostOf(who, answered);
    const tested = await test;
    table.push(
      `| API SIGKILLed right after answering ${answered.length} hits (${answered.length - inDatabase} not yet in the database), then restarted | ${answered.length} | ${lost} |`,
    );
    expect([answered.length, lost, tested.outcome]).toEqual([30, 0, 'delivered']);
  });

  it('when an API is SIGTERMed while hits fire, then every answered hit is recorded', async () => {
    const who = await account('api-sigterm', 5);
    const firing = fire([...who.paths, ...who.paths], [1]);
    await sleep(20);
    await kill(apis[1]!.proc, 'SIGTERM');
    const answered = [...(await firing), ...(await fire(who.paths, [0]))];
    await startApi(1);
    const { lost } = await lostOf(who, answered);
    table.push(
      `| API SIGTERMed while 10 hits fire, then restarted | ${answered.length} answered | ${lost} |`,
    );
    expect(lost).toBe(0);
  });

  it('when the database is SIGKILLed while hits fire, then they are answered and recorded once it is back', async () => {
    const who = await account('database', 5);
    await kill(mongo.process, 'SIGKILL');
    const answered = await fire(who.paths);
    const port = Number(new URL(mongo.address).port);
    mongo = await startLocalMongo({ dataDir, port, log: (line) => logs.push(line) });
    const { lost } = await lostOf(who, answered);
    table.push(
      `| the database SIGKILLed while ${answered.length} hits fire, then restarted | ${answered.length} | ${lost} |`,
    );
    expect([answered.length, lost]).toEqual([10, 0]);
  });

  it('when Temporal is SIGKILLed while hits fire, then every threat event is alerted once it is back', async () => {
    const who = await account('temporal', 5);
    await kill(temporal.process, 'SIGKILL');
    const answered = await fire(who.paths);
    const port = Number(temporal.address.split(':')[1]);
    temporal = await startLocalTemporal({ dataDir, port, log: (line) => logs.push(line) });
    const { lost, events } = await lostOf(who, answered);
    table.push(
      `| Temporal SIGKILLed while ${answered.length} hits fire (${events} events), then restarted | ${answered.length} | ${lost} |`,
    );
    expect([answered.length, lost]).toEqual([10, 0]);
  });

  it('when the worker is SIGKILLed mid-delivery, then each event still reaches the receiver once', async () => {
    const who = await account('worker', 3, '/delay/3000/worker-sigkill');
    const answered = await fire(who.paths);
    await until('a delivery in flight', () =>
      receiver.hitsOn(who.alertPath).length ? true : undefined,
    );
    await kill(worker.proc, 'SIGKILL');
    await startWorker();
    const test = await channelTest(0, who);
    const { lost, events } = await lostOf(who, answered);
    table.push(
      `| worker SIGKILLed mid-delivery (${events} events), then restarted | ${answered.length} | ${lost} |`,
    );
    expect([lost, test.outcome]).toEqual([0, 'delivered']);
  });
});
