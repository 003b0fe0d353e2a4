import request from 'supertest';
import { createKey, signUpAndLogIn, type SignedIn } from '../support/accounts';
import { createTestApp, type TestApp } from '../support/test-app';

let t: TestApp;
const as = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function plantUrl(who: SignedIn) {
  const res = await request(t.app).post('/api/canaries').set(as(who)).send({ kind: 'url' });
  if (res.status !== 201) throw new Error(`plant: ${res.status} ${res.text}`);
  return res.body as { canary_id: string; value: string };
}

const fire = (canary: { value: string }) => request(t.app).get(new URL(canary.value).pathname);

describe('GET /api/dashboard', () => {
  it("counts the caller's own hits, events, canaries and channels, nobody else's", async () => {
    const [alice, bob] = [await signUpAndLogIn(t.app), await signUpAndLogIn(t.app)];
    const [a, b] = [await plantUrl(alice), await plantUrl(alice)];
    const bobs = await plantUrl(bob);
    for (let i = 0; i < 3; i++) await fire(a);
    await fire(b);
    await fire(bobs);
    await t.tripwires.flush();
    const channel = await request(t.app).post('/api/alert-channels').set(as(alice)).send({
      kind: 'webhook',
      name: 'hook',
      url: 'https://93.184.216.34/hooks/incoming',
      secret: 'dashboard-test-webhook-secret',
    });
    expect(channel.status).toBe(201);

    const res = await request(t.app).get('/api/dashboard').set(as(alice));
    expect(res.status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(res.body.hits_by_day).toEqual([{ key: today, count: 4 }]);
    expect(res.body.top_canaries).toEqual([
      { key: a.canary_id, count: 3 },
      { key: b.canary_id, count: 1 },
    ]);
    const events = res.body.events_by_level as { key: string; count: number }[];
    expect(events.reduce((sum, e) => sum + e.count, 0)).toBe(2);
    expect(
      res.body.sources_by_country.reduce((s: number, e: { count: number }) => s + e.count, 0),
    ).toBe(2);
    expect(res.body.deliveries_by_outcome).toEqual([]);
    expect(res.body.channel_health).toEqual([
      {
        channel_id: channel.body.id,
        name: 'hook',
        kind: 'webhook',
        disabled: false,
        healthy: true,
        last_delivery_at: null,
        last_error_at: null,
        last_error: null,
      },
    ]);
    expect(res.body.since).toBe(new Date(Date.parse(today) - 29 * 86_400_000).toISOString());

    const bobView = await request(t.app).get('/api/dashboard').set(as(bob));
    expect(bobView.body.top_canaries).toEqual([{ key: bobs.canary_id, count: 1 }]);
    expect(bobView.body.channel_health).toEqual([]);
  });

  it('leaves out what came before the window', async () => {
    const who = await signUpAndLogIn(t.app);
    const canary = await plantUrl(who);
    await fire(canary);
    await t.tripwires.flush();
    // The hit moved back 40 days (the test's own write): outside the default 30, inside 90.
    await t.mongo.db
      .collection('threat_hits')
      .updateMany(
        { accountId: who.userId },
        { $set: { at: new Date(Date.now() - 40 * 86_400_000) } },
      );
    const recent = await request(t.app).get('/api/dashboard').set(as(who));
    expect(recent.body.hits_by_day).toEqual([]);
    const longer = await request(t.app).get('/api/dashboard?days=90').set(as(who));
    expect(longer.body.hits_by_day).toHaveLength(1);
  });

  it('refuses a window outside 1–90 days', async () => {
    const who = await signUpAndLogIn(t.app);
    for (const days of ['0', '91', 'week']) {
      const res = await request(t.app).get(`/api/dashboard?days=${days}`).set(as(who));
      expect(res.status).toBe(422);
      expect(JSON.stringify(res.body.detail)).toContain('query.days');
    }
  });

  it('answers a key with dashboard:read and refuses one without it', async () => {
    const who = await signUpAndLogIn(t.app);
    const reader = await createKey(t.app, who.token, { scopes: ['dashboard:read'] });
    expect((await request(t.app).get('/api/dashboard').set('X-API-Key', reader.key)).status).toBe(
      200,
    );
    const other = await createKey(t.app, who.token, { scopes: ['threats:read'] });
    const refused = await request(t.app).get('/api/dashboard').set('X-API-Key', other.key);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      detail: 'The API key does not have the required scope: dashboard:read',
    });
    expect((await request(t.app).get('/api/dashboard')).status).toBe(401);
  });
});
