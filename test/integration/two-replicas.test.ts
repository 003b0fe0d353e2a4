/**
 * Two real API processes on one database, as a deployment with two replicas runs: every limit
 * holds exactly when parallel requests are spread over both, because each one is decided by an
 * atomic update in the database, not by anything one process keeps to itself.
 */
import { MongoClient } from 'mongodb';
import { Agent, fetch } from 'undici';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { PASSWORD, uniqueEmail } from '../support/accounts';
import { testConfig } from '../support/test-app';

const config = testConfig();
const apis: ApiProcess[] = [];
// Idle connections are dropped well before the API's 5 s keep-alive ends, so no request is sent on
// a socket the server is closing (the burst test waits for the start of a minute).
const dispatcher = new Agent({ keepAliveTimeout: 1_000 });

const startApi = () =>
  startApiProcess(
    {
      MONGODB_DB: config.MONGODB_DB,
      TEMPORAL_TASK_QUEUE: config.TEMPORAL_TASK_QUEUE,
      LOG_LEVEL: 'warn',
    },
    60_000,
  );

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function call(
  i: number,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Answer> {
  const api = apis[i % apis.length]!;
  const res = await fetch(`${api.url}${path}`, {
    dispatcher,
    method: init.method ?? 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** `count` requests, `concurrency` at a time, alternating between the two processes. */
async function inParallel(
  count: number,
  concurrency: number,
  send: (i: number) => Promise<Answer>,
) {
  const answers: Answer[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) answers.push(await send(next++));
    }),
  );
  return answers;
}

const statuses = (answers: Answer[]) =>
  answers.reduce<Record<number, number>>(
    (acc, a) => ({ ...acc, [a.status]: (acc[a.status] ?? 0) + 1 }),
    {},
  );

async function signUp(): Promise<{ token: string; userId: string; email: string }> {
  const email = uniqueEmail();
  const signup = await call(0, '/api/auth/signup', { body: { email, password: PASSWORD } });
  const login = await call(1, '/api/auth/login', { body: { email, password: PASSWORD } });
  return { token: login.body.token as string, userId: signup.body.user_id as string, email };
}

async function keyFor(token: string): Promise<string> {
  const res = await call(0, '/api/auth/generate-key', {
    headers: { authorization: `Bearer ${token}` },
    body: { scopes: ['shield:write'] },
  });
  return res.body.key as string;
}

beforeAll(async () => {
  apis.push(...(await Promise.all([startApi(), startApi()])));
}, 120_000);

afterAll(async () => {
  await Promise.all(apis.map((api) => api.process.stop()));
  const client = await MongoClient.connect(config.MONGODB_URI);
  await client.db(config.MONGODB_DB).dropDatabase();
  await client.close();
});

describe('two API processes sharing one database', () => {
  it('when 50 key creations race over both, then exactly 5 keys exist', async () => {
    const { token } = await signUp();
    const answers = await inParallel(50, 50, (i) =>
      call(i, '/api/auth/generate-key', {
        headers: { authorization: `Bearer ${token}` },
        body: {},
      }),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(5);
    expect(answers.filter((a) => a.status !== 201).map((a) => a.status)).toEqual(
      Array(45).fill(answers.find((a) => a.status !== 201)!.status),
    );
    const list = await call(1, '/api/auth/keys', {
      method: 'GET',
      headers: { authorization: `Bearer ${token}` },
    });
    expect((list.body.keys as unknown[]).length).toBe(5);
  });

  it('when 50 inspections race over both on the Free plan, then exactly 10 pass and 40 get 402 or 429', async () => {
    const who = await signUp();
    const key = await keyFor(who.token);
    const answers = await inParallel(50, 50, (i) =>
      call(i, '/shield/inspect', {
        headers: { 'x-api-key': key },
        body: { user_id: who.userId, user_message: 'hello' },
      }),
    );
    expect(statuses(answers)[200]).toBe(10);
    expect(
      answers.filter((a) => a.status !== 200).every((a) => [402, 429].includes(a.status)),
    ).toBe(true);
    const usage = await call(0, '/api/usage', {
      method: 'GET',
      headers: { authorization: `Bearer ${who.token}` },
    });
    const metrics = usage.body.metrics as { metric: string; used: number }[];
    expect(metrics.find((m) => m.metric === 'shield_inspections_per_month')?.used).toBe(10);
  });

  it('when 170 inspections at 50 at a time go over both on Pro, then the 120-per-minute burst holds exactly', async () => {
    const who = await signUp();
    const client = await MongoClient.connect(config.MONGODB_URI, { appName: 'tripwire-tests' });
    await client
      .db(config.MONGODB_DB)
      .collection('users')
      .updateOne({ email: who.email }, { $set: { plan: 'pro' } });
    await client.close();
    const key = await keyFor(who.token);
    // All inside one minute window: start early in a minute.
    const second = new Date().getUTCSeconds();
    if (second > 30) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
    const answers = await inParallel(170, 50, (i) =>
      call(i, '/shield/inspect', {
        headers: { 'x-api-key': key },
        body: { user_id: who.userId, user_message: 'hello' },
      }),
    );
    expect(statuses(answers)).toEqual({ 200: 120, 429: 50 });
  }, 120_000);
});

describe('one checkpoint signer over both', () => {
  it('when both processes run, then exactly one holds the signer lease, as their gauges say', async () => {
    const gauge = async (url: string) => {
      const text = await (await fetch(`${url}/metrics`, { dispatcher })).text();
      return Number(/^evidence_checkpoint_signer (\d)$/m.exec(text)?.[1]);
    };
    // Each process tries to take the lease on its first tick, about a second after it starts.
    let held = await Promise.all(apis.map((api) => gauge(api.url)));
    for (let i = 0; i < 50 && held[0]! + held[1]! !== 1; i++) {
      await new Promise((r) => setTimeout(r, 200));
      held = await Promise.all(apis.map((api) => gauge(api.url)));
    }
    expect([...held].sort()).toEqual([0, 1]);
  });
});
