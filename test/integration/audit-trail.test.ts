import request from 'supertest';
import { createKey, signUpAndLogIn, type SignedIn } from '../support/accounts';
import { AuditTrail, toEvidence } from '../../src/evidence/trail/audit-trail';
import { auditTrailView } from '../../src/evidence/trail/trail.routes';
import { EvidenceRepository } from '../../src/evidence/evidence.repository';
import { EvidenceStore } from '../../src/evidence/evidence.store';
import { createTestApp, type TestApp } from '../support/test-app';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const trail = (who: SignedIn, query = '') =>
  request(t.app).get(`/api/audit/trail${query}`).set('Authorization', `Bearer ${who.token}`);

/** Key-use entries are written once the response has gone out; wait until `count` are there. */
async function waitForEntries(who: SignedIn, count: number) {
  for (let i = 0; i < 50; i++) {
    const res = await trail(who, '?limit=200');
    if (res.body.entries.length >= count) {
      auditTrailView.parse(res.body);
      return res.body.entries as Record<string, unknown>[];
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`audit trail never reached ${count} entries`);
}

describe('audit trail of key use', () => {
  it('when a key is created, used and revoked, then every step is listed newest first and stays', async () => {
    const who = await signUpAndLogIn(t.app);
    const { key, id } = await createKey(t.app, who.token, { scopes: ['shield:write'] });
    const use = (path: string, body: object, requestId: string) =>
      request(t.app).post(path).set('X-API-Key', key).set('X-Request-ID', requestId).send(body);
    expect(
      (await use('/shield/inspect', { user_id: who.userId, user_message: 'hi' }, 'r-ok')).status,
    ).toBe(200);
    expect((await use('/shield/inspect', { user_id: who.userId }, 'r-bad')).status).toBe(422);
    expect((await use('/rag/documents', {}, 'r-scope')).status).toBe(403);
    await waitForEntries(who, 4);
    await request(t.app)
      .delete(`/api/auth/keys/${id}`)
      .set('Authorization', `Bearer ${who.token}`)
      .expect(200);

    const entries = await waitForEntries(who, 5);
    expect(entries.map((e) => e.action)).toEqual([
      'api_key.revoked',
      'api_key.used',
      'api_key.used',
      'api_key.used',
      'api_key.created',
    ]);
    expect(entries.every((e) => e.key_id === id)).toBe(true);
    expect(entries.every((e) => /^[0-9a-f]{64}$/.test(String(e.content_hash)))).toBe(true);
    const uses = entries.filter((e) => e.action === 'api_key.used').map((e) => e.request);
    expect(uses).toEqual(
      expect.arrayContaining([
        { method: 'POST', path: '/shield/inspect', status: 200, request_id: 'r-ok' },
        { method: 'POST', path: '/shield/inspect', status: 422, request_id: 'r-bad' },
        { method: 'POST', path: '/rag/documents', status: 403, request_id: 'r-scope' },
      ]),
    );
    expect(entries[0]).toMatchObject({ actor: { type: 'session', id: expect.any(String) } });
    expect(entries[1]).toMatchObject({ actor: { type: 'api_key', id } });
  });

  it('when listing page by page, then the cursor walks from newest to oldest without repeats', async () => {
    const who = await signUpAndLogIn(t.app);
    for (let i = 0; i < 3; i++) await createKey(t.app, who.token);
    const all = await waitForEntries(who, 3);
    const ids = (page: { entries: { log_id: string }[] }) => page.entries.map((e) => e.log_id);
    const first = await trail(who, '?limit=2');
    expect(ids(first.body)).toEqual(all.slice(0, 2).map((e) => e.log_id));
    expect(first.body.next).toBe(all[1]!.seq);
    const second = await trail(who, `?limit=2&cursor=${first.body.next_cursor}`);
    expect(ids(second.body)).toEqual([all[2]!.log_id]);
    expect(second.body.next_cursor).toBeNull();
    expect(second.body.next).toBeNull();
    // The deprecated `before` (the `seq` in `next`) still pages the same way for one release.
    const deprecated = await trail(who, `?limit=2&before=${first.body.next}`);
    expect(deprecated.body).toEqual(second.body);
  });

  it("when another account lists its trail, then it sees none of this account's entries", async () => {
    const who = await signUpAndLogIn(t.app);
    await createKey(t.app, who.token);
    const other = await signUpAndLogIn(t.app);
    expect((await trail(other)).body).toEqual({ entries: [], next_cursor: null, next: null });
  });

  it('when the page parameters are bad, then 422 names them', async () => {
    const who = await signUpAndLogIn(t.app);
    expect((await trail(who, '?limit=0')).body.detail).toMatch(/^query\.limit: /);
    expect((await trail(who, '?before=xyz')).body.detail).toMatch(/^query\.before: /);
    expect((await trail(who, '?cursor=xyz')).body.detail).toBe(
      'query.cursor: not a cursor from a previous page',
    );
  });

  it('when called without a session, then 401', async () => {
    expect((await request(t.app).get('/api/audit/trail')).status).toBe(401);
  });
});

describe('audit trail storage', () => {
  it('when a batch is written twice (a retry), then each entry is sealed once, in order', async () => {
    const trailStore = new AuditTrail(
      new EvidenceStore(t.mongo.db, () => new Date()),
      new EvidenceRepository(t.mongo.db),
    );
    const batch = [1, 2].map((n) =>
      toEvidence({
        accountId: 'usr_retry',
        at: new Date(),
        action: 'api_key.used',
        actor: { type: 'api_key', id: 'k' },
        keyId: 'k',
        request: { method: 'GET', path: '/shield', status: 200, requestId: `r${n}` },
      }),
    );
    const first = await trailStore.appendBatch('usr_retry', batch);
    const again = await trailStore.appendBatch('usr_retry', batch);
    expect(again.map((r) => [r.id, r.seq, r.contentHash])).toEqual(
      first.map((r) => [r.id, r.seq, r.contentHash]),
    );
    expect(await t.mongo.db.collection('evidence').countDocuments({ accountId: 'usr_retry' })).toBe(
      2,
    );
  });
});
