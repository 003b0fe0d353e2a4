import request from 'supertest';
import {
  EvidenceRepository,
  toRecord,
  type EvidenceDoc,
} from '../../src/evidence/evidence.repository';
import {
  createKey,
  PASSWORD,
  setRole as setRoleWithCli,
  signUpAndLogIn,
  type SignedIn,
} from '../support/accounts';
import { createTestApp, type TestApp } from '../support/test-app';

let t: TestApp;
let operator: SignedIn;
let operatorKey: string;

const setRole = (who: string, role: 'user' | 'operator') => setRoleWithCli(t.config, who, role);

const asKey = (key: string) => ({ 'X-API-Key': key });
const asSession = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });
/** The account's sealed records of a kind, as their owner reads them (personal values in place). */
async function sealed(accountId: string, kind: string) {
  const docs = await t.mongo.db
    .collection<EvidenceDoc>('evidence')
    .find({ accountId, kind })
    .toArray();
  const evidence = new EvidenceRepository(t.mongo.db);
  return Promise.all(docs.map((doc) => evidence.readable(toRecord(doc))));
}

beforeAll(async () => {
  t = await createTestApp();
  operator = await signUpAndLogIn(t.app);
  expect(setRole(operator.email, 'operator')).toContain('role user → operator');
  operatorKey = (await createKey(t.app, operator.token, { scopes: ['admin:*'] })).key;
}, 60_000);
afterAll(() => t.close());

describe('who may use /api/admin', () => {
  it('refuses every other account, whatever its scopes', async () => {
    const who = await signUpAndLogIn(t.app);
    const all = await createKey(t.app, who.token, { scopes: ['*'] });
    for (const headers of [asKey(all.key), asSession(who)]) {
      const res = await request(t.app).get('/api/admin/accounts').set(headers);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ detail: 'Only operator accounts may use the admin API' });
    }
    const disable = await request(t.app)
      .post(`/api/admin/accounts/${who.userId}/disable`)
      .set(asKey(all.key));
    expect(disable.status).toBe(403);
    expect(
      (await t.mongo.db.collection('users').findOne({ _id: who.userId as never }))!.disabledAt,
    ).toBeUndefined();
  });

  it('lets no other account make a key with admin scopes', async () => {
    const who = await signUpAndLogIn(t.app);
    for (const scopes of [['admin:*'], ['canaries:read', 'admin:read']]) {
      const res = await request(t.app)
        .post('/api/auth/generate-key')
        .set(asSession(who))
        .send({ scopes });
      expect(res.status).toBe(403);
      expect(res.body.detail).toMatch(/^Only operator accounts may hold admin scopes: admin:/);
    }
    expect(await t.mongo.db.collection('api_keys').countDocuments({ accountId: who.userId })).toBe(
      0,
    );
  });

  it("refuses an operator's key without admin:* with the spec's detail", async () => {
    const key = await createKey(t.app, operator.token, { scopes: ['threats:read'] });
    const res = await request(t.app).get('/api/admin/accounts').set(asKey(key.key));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ detail: 'The API key does not have the required scope: admin:*' });
  });

  it('takes the role away at once when the CLI sets it back', async () => {
    const other = await signUpAndLogIn(t.app);
    setRole(other.userId, 'operator');
    const key = (await createKey(t.app, other.token, { scopes: ['admin:*'] })).key;
    expect((await request(t.app).get('/api/admin/accounts').set(asKey(key))).status).toBe(200);
    setRole(other.userId, 'user');
    expect((await request(t.app).get('/api/admin/accounts').set(asKey(key))).status).toBe(403);
  });
});

describe("an operator's admin API", () => {
  it('lists and searches accounts by email, paged', async () => {
    const tag = `admin-search-${Date.now()}`;
    const found: string[] = [];
    for (let i = 0; i < 3; i++) {
      found.push((await signUpAndLogIn(t.app, `${tag}-${i}@example.com`)).userId);
    }
    const first = await request(t.app)
      .get(`/api/admin/accounts?q=${tag.toUpperCase()}&limit=2`)
      .set(asKey(operatorKey));
    expect(first.status).toBe(200);
    expect(first.body.accounts.map((a: { user_id: string }) => a.user_id)).toEqual(
      found.slice(0, 2),
    );
    expect(first.body.accounts[0]).toEqual({
      user_id: found[0],
      email: `${tag}-0@example.com`,
      plan: 'free',
      role: 'user',
      disabled_at: null,
      created_at: expect.any(String),
    });
    const second = await request(t.app)
      .get(`/api/admin/accounts?q=${tag}&limit=2&cursor=${first.body.next_cursor as string}`)
      .set(asKey(operatorKey));
    expect(second.body.accounts.map((a: { user_id: string }) => a.user_id)).toEqual([found[2]]);
    expect(second.body.next_cursor).toBeNull();
  });

  it("reads an account's usage and changes its plan, sealed naming the operator", async () => {
    const who = await signUpAndLogIn(t.app);
    const read = await request(t.app)
      .get(`/api/admin/accounts/${who.userId}`)
      .set(asKey(operatorKey));
    expect(read.status).toBe(200);
    expect(read.body.account.plan).toBe('free');
    expect(read.body.usage.map((u: { metric: string }) => u.metric)).toContain(
      'shield_inspections_per_month',
    );
    const changed = await request(t.app)
      .patch(`/api/admin/accounts/${who.userId}`)
      .set(asKey(operatorKey))
      .send({ plan: 'pro' });
    expect(changed.status).toBe(200);
    expect(changed.body.plan).toBe('pro');
    const me = await request(t.app).get('/api/users/me').set(asSession(who));
    expect(me.body.plan).toBe('pro');
    const [record] = await sealed(who.userId, 'audit.admin.plan_changed');
    expect(record!.data).toMatchObject({
      operator: {
        account_id: operator.userId,
        email: operator.email,
        via: { type: 'api_key', id: expect.any(String) },
      },
      account_id: who.userId,
      from: 'free',
      to: 'pro',
    });
    const bad = await request(t.app)
      .patch(`/api/admin/accounts/${who.userId}`)
      .set(asKey(operatorKey))
      .send({ plan: 'platinum' });
    expect(bad.status).toBe(422);
  });

  it('disables an account (no sign-in, no session, no key) and enables it again', async () => {
    const who = await signUpAndLogIn(t.app);
    const key = (await createKey(t.app, who.token)).key;
    const disabled = await request(t.app)
      .post(`/api/admin/accounts/${who.userId}/disable`)
      .set(asSession(operator));
    expect(disabled.status).toBe(200);
    expect(disabled.body.disabled_at).toEqual(expect.any(String));
    expect((await request(t.app).get('/api/users/me').set(asSession(who))).status).toBe(401);
    expect((await request(t.app).get('/api/canaries').set(asKey(key))).status).toBe(401);
    const login = await request(t.app)
      .post('/api/auth/login')
      .send({ email: who.email, password: PASSWORD });
    expect(login.status).toBe(403);
    expect(login.body.detail).toMatch(/disabled/);
    const [record] = await sealed(who.userId, 'audit.admin.account_disabled');
    expect(record!.data).toMatchObject({
      operator: { account_id: operator.userId, via: { type: 'session' } },
      sessions_ended: 1,
      keys_suspended: 1,
    });

    const enabled = await request(t.app)
      .post(`/api/admin/accounts/${who.userId}/enable`)
      .set(asKey(operatorKey));
    expect(enabled.body.disabled_at).toBeNull();
    expect((await request(t.app).get('/api/canaries').set(asKey(key))).status).toBe(200);
    const again = await request(t.app)
      .post('/api/auth/login')
      .send({ email: who.email, password: PASSWORD });
    expect(again.status).toBe(200);
    expect(await sealed(who.userId, 'audit.admin.account_enabled')).toHaveLength(1);
  });

  it("ends an account's sessions", async () => {
    const who = await signUpAndLogIn(t.app);
    const res = await request(t.app)
      .post(`/api/admin/accounts/${who.userId}/revoke-sessions`)
      .set(asKey(operatorKey));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ sessions_ended: 1 });
    expect((await request(t.app).get('/api/users/me').set(asSession(who))).status).toBe(401);
    expect(await sealed(who.userId, 'audit.admin.sessions_revoked')).toHaveLength(1);
  });

  it('answers 404 for an account that does not exist, and seals nothing', async () => {
    for (const [method, path] of [
      ['get', '/api/admin/accounts/usr_nope'],
      ['post', '/api/admin/accounts/usr_nope/disable'],
      ['post', '/api/admin/accounts/usr_nope/revoke-sessions'],
    ] as const) {
      const res = await request(t.app)[method](path).set(asKey(operatorKey));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'No account usr_nope' });
    }
    expect(await t.mongo.db.collection('evidence').countDocuments({ accountId: 'usr_nope' })).toBe(
      0,
    );
  });
});
