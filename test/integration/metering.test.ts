import request from 'supertest';
import { MongoClient } from 'mongodb';
import { connectMongo } from '../../src/db/mongo';
import { MongoCounterStore } from '../../src/metering/counters.repository';
import { freePort } from '../../tools/stack';
import { usageView } from '../../src/metering/usage.routes';
import { PLAN_LIMITS, type ActionLimits, type PlanLimits } from '../../src/metering/plan-limits';
import { createKey, signUpAndLogIn } from '../support/accounts';
import { createTestApp, manualClock, type TestApp } from '../support/test-app';

const MINUTE = 60_000;

/** Every plan gets the same limits for the shield, so tests can shape them. */
function limits(shield: ActionLimits): PlanLimits {
  return {
    free: { ...PLAN_LIMITS.free, shield_inspections: shield },
    pro: { ...PLAN_LIMITS.pro, shield_inspections: shield },
    enterprise: { ...PLAN_LIMITS.enterprise, shield_inspections: shield },
  };
}

async function customer(app: TestApp) {
  const who = await signUpAndLogIn(app.app);
  const { key } = await createKey(app.app, who.token, { scopes: ['shield:write'] });
  const inspect = (body: object = { user_id: who.userId, user_message: 'hello' }) =>
    request(app.app).post('/shield/inspect').set('X-API-Key', key).send(body);
  const usage = async () =>
    usageView.parse(
      (await request(app.app).get('/api/usage').set('Authorization', `Bearer ${who.token}`)).body,
    );
  const used = async (metric: string) =>
    (await usage()).metrics.find((m) => m.metric === metric)!.used;
  return { ...who, inspect, usage, used };
}

describe('free plan, real plan table', () => {
  const clock = manualClock(new Date('2026-03-10T12:00:00Z'));
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ clock: clock.clock });
  });
  afterAll(() => t.close());

  it('when the 11th inspection of the month comes, then 402 with every field of the spec', async () => {
    const c = await customer(t);
    for (let i = 0; i < 10; i++) {
      expect((await c.inspect()).status).toBe(200);
      clock.advance(7 * MINUTE); // stay clear of the burst limit
    }
    const res = await c.inspect();
    expect(res.status).toBe(402);
    expect(res.body.detail).toEqual({
      error: 'plan_limit_exceeded',
      metric: 'shield_inspections_per_month',
      plan: 'free',
      plan_display_name: 'Free',
      limit: PLAN_LIMITS.free.shield_inspections.perMonth,
      used: 10,
      message: expect.stringContaining('resets on 2026-04-01'),
      upgrade_url: '/console/#/account',
      resets_at: '2026-04-01',
    });
  });

  it('when the account looks at its usage, then each metric shows used, limit and reset date', async () => {
    const c = await customer(t);
    await c.inspect();
    expect(await c.usage()).toEqual({
      plan: 'free',
      plan_display_name: 'Free',
      metrics: [
        { metric: 'shield_inspections_per_month', used: 1, limit: 10, resets_at: '2026-04-01' },
        { metric: 'shield_inspections_per_day', used: 1, limit: 10, resets_at: expect.any(String) },
        { metric: 'canary_plants_per_month', used: 0, limit: 10, resets_at: '2026-04-01' },
        { metric: 'canary_plants_per_day', used: 0, limit: 10, resets_at: expect.any(String) },
      ],
    });
  });

  it('when a request succeeds, then it carries the burst window’s rate-limit headers', async () => {
    const c = await customer(t);
    const res = await c.inspect();
    expect(res.headers['ratelimit-limit']).toBe('10');
    expect(res.headers['ratelimit-remaining']).toBe('9');
    expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThan(0);
  });
});

describe('burst, daily allowance, concurrency and roll-over', () => {
  const clock = manualClock(new Date('2026-01-31T23:58:30Z'));
  let shield: ActionLimits = { perMonth: 1000, perDay: 1000, burstPerMinute: 1000 };
  let t: TestApp;
  beforeAll(async () => {
    // The table is read on each request, so a test can reshape it through this object.
    const table = limits(shield);
    t = await createTestApp({ clock: clock.clock, planLimits: table });
    Object.defineProperty(table.free, 'shield_inspections', { get: () => shield });
  });
  afterAll(() => t.close());

  it('when the burst limit is hit, then 429 with Retry-After matching the body, and no quota spent', async () => {
    shield = { perMonth: 1000, perDay: 1000, burstPerMinute: 3 };
    const c = await customer(t);
    for (let i = 0; i < 3; i++) expect((await c.inspect()).status).toBe(200);
    const res = await c.inspect();
    expect(res.status).toBe(429);
    expect(res.body.detail).toMatchObject({
      error: 'burst_limit_exceeded',
      retry_after_seconds: 30,
    });
    expect(res.headers['retry-after']).toBe('30');
    expect(await c.used('shield_inspections_per_month')).toBe(3);
    expect(await c.used('shield_inspections_per_day')).toBe(3);
  });

  it('when the daily allowance is used up, then 402 resetting the next UTC day, and nothing spent', async () => {
    shield = { perMonth: 1000, perDay: 2, burstPerMinute: 1000 };
    const c = await customer(t);
    await c.inspect();
    await c.inspect();
    const res = await c.inspect();
    expect(res.status).toBe(402);
    expect(res.body.detail).toMatchObject({
      error: 'plan_limit_exceeded',
      metric: 'shield_inspections_per_day',
      limit: 2,
      resets_at: '2026-02-01',
    });
    expect(await c.used('shield_inspections_per_month')).toBe(2);
  });

  it('when 50 requests race for the last 10 of the month, then exactly 10 succeed', async () => {
    shield = { perMonth: 10, perDay: 1000, burstPerMinute: 1000 };
    const c = await customer(t);
    const statuses = (await Promise.all(Array.from({ length: 50 }, () => c.inspect()))).map(
      (r) => r.status,
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 402)).toHaveLength(40);
    expect(await c.used('shield_inspections_per_month')).toBe(10);
  });

  it('when the request is invalid or names another account, then it spends nothing', async () => {
    shield = { perMonth: 1000, perDay: 1000, burstPerMinute: 1000 };
    const c = await customer(t);
    expect((await c.inspect({ user_id: c.userId })).status).toBe(422);
    expect((await c.inspect({ user_id: 'usr_someoneelse', user_message: 'x' })).status).toBe(403);
    expect(await c.used('shield_inspections_per_month')).toBe(0);
  });

  it('when the UTC day and then the month turn over, then the allowances start again', async () => {
    shield = { perMonth: 3, perDay: 1, burstPerMinute: 1000 };
    const c = await customer(t);
    expect((await c.inspect()).status).toBe(200);
    expect((await c.inspect()).status).toBe(402); // daily
    clock.advance(2 * MINUTE); // 2026-02-01 00:00:30: a new day and a new month
    expect((await c.inspect()).status).toBe(200);
    expect(await c.used('shield_inspections_per_month')).toBe(1);
  });
});

describe('when the meter store fails', () => {
  it('when the counters cannot be reached, then 503 daily_quota_unavailable and nothing spent', async () => {
    const probe = await createTestApp();
    // A database address where nothing listens: every count fails as with the database gone.
    const gone = new MongoClient(`mongodb://127.0.0.1:${await freePort()}/`, {
      serverSelectionTimeoutMS: 300,
    });
    const t = await createTestApp({
      config: probe.config,
      counters: new MongoCounterStore(gone.db(probe.config.MONGODB_DB)),
    });
    try {
      const c = await customer(t);
      const res = await c.inspect();
      expect(res.status).toBe(503);
      expect(res.body.detail).toMatchObject({ error: 'daily_quota_unavailable' });
      expect(await probe.mongo.db.collection('meter_counters').countDocuments()).toBe(0);
    } finally {
      await t.close();
      await gone.close();
      await probe.disconnect();
    }
  });
});

describe('counter documents', () => {
  const roomy = { burstPerMinute: 1e6, perDay: 1e6, perMonth: 1e6 };
  const at = (counter: string, minute = '2026-03-14T09:26') => ({
    counter,
    month: '2026-03',
    day: '2026-03-14',
    minute,
  });
  let t: TestApp;
  let replica: Awaited<ReturnType<typeof connectMongo>>;
  beforeAll(async () => {
    t = await createTestApp();
    replica = await connectMongo(t.config.MONGODB_URI, t.config.MONGODB_DB);
  });
  afterAll(async () => {
    await replica.client.close();
    await t.close();
  });
  const stores = () => [new MongoCounterStore(t.appMongo.db), new MongoCounterStore(replica.db)];

  it('when 50 requests on two replicas race for a burst of 10, then exactly 10 get a place in all three windows', async () => {
    const [a, b] = stores();
    const windows = at('usr_race:shield_inspections');
    const admissions = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 ? a! : b!).take(windows, { ...roomy, burstPerMinute: 10 }),
      ),
    );

    expect(admissions.filter((x) => x.admitted)).toHaveLength(10);
    const refused = admissions.filter((x) => !x.admitted).map((x) => x.counts);
    expect(refused.every((c) => c.minute === 10)).toBe(true);
    expect(await a!.read([windows])).toEqual([{ minute: 10, day: 10, month: 10 }]);
  });

  it('when the minute turns, then the burst starts again while the day and month go on, and a replica behind counts in the newer minute', async () => {
    const [a, b] = stores();
    const limits = { ...roomy, burstPerMinute: 2 };
    const first = at('usr_minutes:shield_inspections', '2026-03-14T09:26');
    const next = at('usr_minutes:shield_inspections', '2026-03-14T09:27');
    await a!.take(first, limits);
    await a!.take(first, limits);
    expect((await a!.take(first, limits)).admitted).toBe(false);

    expect(await a!.take(next, limits)).toEqual({
      admitted: true,
      counts: { minute: 1, day: 3, month: 3 },
    });
    // Its clock still says 09:26: it must not start that minute again with room for two more.
    expect(await b!.take(first, limits)).toEqual({
      admitted: true,
      counts: { minute: 2, day: 4, month: 4 },
    });
    expect((await b!.take(first, limits)).admitted).toBe(false);
  });

  it('when a place is given back after the minute turned, then the day and month get it back and the new minute keeps its count', async () => {
    const [a] = stores();
    const first = at('usr_refund:shield_inspections', '2026-03-14T09:26');
    const next = at('usr_refund:shield_inspections', '2026-03-14T09:27');
    await a!.take(first, roomy);
    await a!.take(next, roomy);

    await a!.giveBack(first);

    expect(await a!.read([next])).toEqual([{ minute: 1, day: 1, month: 1 }]);
  });
});
