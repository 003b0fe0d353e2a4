import request from 'supertest';
import { keyListView, newKeyView, revokedKeyView } from '../../src/keys/api-keys.routes';
import { createKey, signUpAndLogIn, type SignedIn } from '../support/accounts';
import { createTestApp, type TestApp } from '../support/test-app';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const bearer = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });
const listKeys = (who: SignedIn) => request(t.app).get('/api/auth/keys').set(bearer(who));
const inspect = (key: string, userId: string) =>
  request(t.app)
    .post('/shield/inspect')
    .set('X-API-Key', key)
    .send({ user_id: userId, user_message: 'hello' });

describe('generate-key', () => {
  it('when a signed-in user creates a key, then the full key is shown once with its details', async () => {
    const who = await signUpAndLogIn(t.app);
    const res = await request(t.app)
      .post('/api/auth/generate-key')
      .set(bearer(who))
      .send({ name: 'ci' });
    expect(res.status).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    newKeyView.parse(res.body);
    expect(res.body).toEqual({
      key: expect.stringMatching(/^svc_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/),
      id: expect.stringMatching(/^[a-z0-9]{12}$/),
      name: 'ci',
      prefix: expect.any(String),
      scopes: ['*'],
      created_at: expect.any(String),
      last_used_at: null,
    });
    expect(res.body.key.startsWith(`svc_${res.body.id}_`)).toBe(true);
    expect(res.body.prefix).toBe(res.body.key.slice(0, `svc_${res.body.id}_`.length + 4));
  });

  it('when an API key (not a session) asks for a key, then 401 and nothing is created', async () => {
    const who = await signUpAndLogIn(t.app);
    const { key } = await createKey(t.app, who.token);
    const res = await request(t.app).post('/api/auth/generate-key').set('X-API-Key', key).send({});
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/API keys are not accepted/);
    expect((await listKeys(who)).body.keys).toHaveLength(1);
    expect((await request(t.app).get('/api/auth/keys').set('X-API-Key', key)).status).toBe(401);
  });

  it('when scopes are given, then they are normalised; 21 entries are refused with 422', async () => {
    const who = await signUpAndLogIn(t.app);
    const mixed = await createKey(t.app, who.token, {
      scopes: ['Shield:Write', 'shield:write', 'bad scope', 'AUDIT:*'],
    });
    expect(mixed.scopes).toEqual(['shield:write', 'audit:*']);
    expect((await createKey(t.app, who.token, { scopes: [] })).scopes).toEqual(['*']);
    expect((await createKey(t.app, who.token, { scopes: ['$$$'] })).scopes).toEqual(['*']);
    const twenty = Array.from({ length: 20 }, (_, i) => `ns${i}:read`);
    expect((await createKey(t.app, who.token, { scopes: twenty })).scopes).toHaveLength(20);

    const tooMany = await request(t.app)
      .post('/api/auth/generate-key')
      .set(bearer(who))
      .send({ scopes: [...twenty, 'one:more'] });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body).toEqual({ detail: 'body.scopes: at most 20 entries' });
    const notStrings = await request(t.app)
      .post('/api/auth/generate-key')
      .set(bearer(who))
      .send({ scopes: [1, 2] });
    expect(notStrings.status).toBe(422);
    expect(notStrings.body.detail).toMatch(/^body\.scopes\[0\]: /);
    expect((await listKeys(who)).body.keys).toHaveLength(4);
  });
});

describe('at most 5 active keys', () => {
  it('when a sixth key is requested, then 400 says why; a revocation frees a place', async () => {
    const who = await signUpAndLogIn(t.app);
    const keys = [];
    for (let i = 0; i < 5; i++) keys.push(await createKey(t.app, who.token));
    const sixth = await request(t.app).post('/api/auth/generate-key').set(bearer(who)).send({});
    expect(sixth.status).toBe(400);
    expect(sixth.body.detail).toMatch(/at most 5 active API keys/);

    await request(t.app).delete(`/api/auth/keys/${keys[0]!.id}`).set(bearer(who)).expect(200);
    const replacement = await createKey(t.app, who.token);
    expect((await listKeys(who)).body.keys).toHaveLength(5);
    expect((await inspect(keys[0]!.key, who.userId)).status).toBe(401);
    expect((await inspect(replacement.key, who.userId)).status).toBe(200);
  });

  it('when 20 creations race, then exactly 5 succeed and the rest get 400', async () => {
    const who = await signUpAndLogIn(t.app);
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        request(t.app).post('/api/auth/generate-key').set(bearer(who)).send({}),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 400)).toHaveLength(15);
    expect(
      await t.mongo.db
        .collection('api_keys')
        .countDocuments({ accountId: who.userId, revokedAt: null }),
    ).toBe(5);
  });

  it('when a creation crashed after taking a place, then the place is recovered', async () => {
    const who = await signUpAndLogIn(t.app);
    for (let i = 0; i < 4; i++) await createKey(t.app, who.token);
    await t.mongo.db.collection<{ _id: string }>('api_key_slots').insertOne({
      _id: `${who.userId}:4`,
      accountId: who.userId,
      keyId: 'neverwritten',
      claimedAt: new Date(Date.now() - 5 * 60_000),
    } as never);
    await createKey(t.app, who.token);
    expect((await listKeys(who)).body.keys).toHaveLength(5);
  });
});

describe('list', () => {
  it('when keys are listed, then no key value or hash appears', async () => {
    const who = await signUpAndLogIn(t.app);
    const created = await createKey(t.app, who.token, { name: 'listed' });
    const res = await listKeys(who);
    expect(res.status).toBe(200);
    expect(res.body.keys).toEqual([
      {
        id: created.id,
        name: 'listed',
        prefix: created.prefix,
        scopes: ['*'],
        created_at: expect.any(String),
        last_used_at: null,
      },
    ]);
    const stored = await t.mongo.db.collection('api_keys').findOne({ _id: created.id as never });
    const secret = created.key.split('_').slice(2).join('_');
    expect(res.text).not.toContain(secret);
    expect(res.text).not.toContain(String(stored?.secretHash));
    expect(JSON.stringify(stored)).not.toContain(secret);
  });

  it('when a key is used, then last used is shown', async () => {
    const who = await signUpAndLogIn(t.app);
    const { key } = await createKey(t.app, who.token);
    expect((await inspect(key, who.userId)).status).toBe(200);
    let lastUsed: unknown = null;
    for (let i = 0; i < 20 && !lastUsed; i++) {
      lastUsed = keyListView.parse((await listKeys(who)).body).keys[0]!.last_used_at;
      if (!lastUsed) await new Promise((r) => setTimeout(r, 50));
    }
    expect(lastUsed).toEqual(expect.any(String));
  });
});

describe('revocation', () => {
  it('when revoked by id, then the key is refused on the very next request and stays revoked', async () => {
    const who = await signUpAndLogIn(t.app);
    const { key, id } = await createKey(t.app, who.token);
    expect((await inspect(key, who.userId)).status).toBe(200);
    const res = await request(t.app).delete(`/api/auth/keys/${id}`).set(bearer(who));
    expect(res.status).toBe(200);
    expect(revokedKeyView.parse(res.body)).toMatchObject({
      revoked: { id },
      revoked_at: expect.any(String),
    });
    expect((await inspect(key, who.userId)).status).toBe(401);
    expect((await listKeys(who)).body.keys).toEqual([]);
    const again = await request(t.app).delete(`/api/auth/keys/${id}`).set(bearer(who));
    expect(again.status).toBe(404);
    expect(again.body.detail).toMatch(/already revoked/);
  });

  it('when revoked by raw value, then it stops working; a wrong secret revokes nothing', async () => {
    const who = await signUpAndLogIn(t.app);
    const { key } = await createKey(t.app, who.token);
    const forged = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    const wrong = await request(t.app)
      .post('/api/auth/revoke-key')
      .set(bearer(who))
      .send({ key: forged });
    expect(wrong.status).toBe(404);
    expect((await inspect(key, who.userId)).status).toBe(200);

    const res = await request(t.app).post('/api/auth/revoke-key').set(bearer(who)).send({ key });
    expect(res.status).toBe(200);
    revokedKeyView.parse(res.body);
    expect((await inspect(key, who.userId)).status).toBe(401);
  });

  it('when the raw value is malformed or missing, then 422 names the field', async () => {
    const who = await signUpAndLogIn(t.app);
    const bad = await request(t.app)
      .post('/api/auth/revoke-key')
      .set(bearer(who))
      .send({ key: 'nope' });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^key: /);
    const missing = await request(t.app).post('/api/auth/revoke-key').set(bearer(who)).send({});
    expect(missing.body).toEqual({ detail: 'body.key: Required' });
  });

  it("when another account's key is revoked, then 403 and the key keeps working", async () => {
    const owner = await signUpAndLogIn(t.app);
    const other = await signUpAndLogIn(t.app);
    const { key, id } = await createKey(t.app, owner.token);
    const byId = await request(t.app).delete(`/api/auth/keys/${id}`).set(bearer(other));
    expect(byId.status).toBe(403);
    const byValue = await request(t.app)
      .post('/api/auth/revoke-key')
      .set(bearer(other))
      .send({ key });
    expect(byValue.status).toBe(403);
    expect((await inspect(key, owner.userId)).status).toBe(200);
  });

  it('when the key id is unknown, then 404', async () => {
    const who = await signUpAndLogIn(t.app);
    const res = await request(t.app).delete('/api/auth/keys/doesnotexist').set(bearer(who));
    expect(res.status).toBe(404);
  });
});

describe('authentication with a key', () => {
  it('when the key is malformed or unknown, then 401', async () => {
    const who = await signUpAndLogIn(t.app);
    const { key } = await createKey(t.app, who.token);
    const unknown = `svc_${'z'.repeat(12)}_${key.slice(-43)}`;
    for (const bad of ['garbage', 'svc_abc_def', unknown, `${key}x`, key.toUpperCase()]) {
      const res = await inspect(bad, who.userId);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ detail: 'Invalid or revoked API key' });
    }
  });

  it('when a product route gets no key, then 401; a session token does not stand in for one', async () => {
    const who = await signUpAndLogIn(t.app);
    const none = await request(t.app)
      .post('/shield/inspect')
      .send({ user_id: who.userId, user_message: 'x' });
    expect(none.status).toBe(401);
    expect(none.body.detail).toMatch(/Missing API key/);
    const session = await request(t.app)
      .post('/shield/inspect')
      .set(bearer(who))
      .send({ user_id: who.userId, user_message: 'x' });
    expect(session.status).toBe(401);
  });
});

describe('account ownership', () => {
  it("when a call names another account's user_id, then 403 before any work", async () => {
    const who = await signUpAndLogIn(t.app);
    const other = await signUpAndLogIn(t.app);
    const { key } = await createKey(t.app, who.token);
    const res = await request(t.app)
      .post('/shield/inspect')
      .set('X-API-Key', key)
      .send({ user_id: other.userId });
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/another account/);
  });

  it('when the call names the caller’s own account, then it is served; a bad body gets 422', async () => {
    const who = await signUpAndLogIn(t.app);
    const { key } = await createKey(t.app, who.token);
    const ok = await inspect(key, who.userId);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ user_id: who.userId, verdict: 'allow', findings: [] });
    const bad = await request(t.app)
      .post('/shield/inspect')
      .set('X-API-Key', key)
      .send({ user_id: who.userId });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({ detail: 'body.user_message: Required' });
  });
});
