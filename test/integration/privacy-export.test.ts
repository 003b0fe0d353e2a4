import request from 'supertest';
import { createKey, PASSWORD, signUpAndLogIn, type SignedIn } from '../support/accounts';
import { createTestApp, type TestApp } from '../support/test-app';

let t: TestApp;
const as = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });
const CHANNEL_SECRET = 'privacy-test-webhook-secret';

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function withData(who: SignedIn) {
  const key = await createKey(t.app, who.token, { name: 'ci', scopes: ['privacy:read'] });
  const canary = await request(t.app).post('/api/canaries').set(as(who)).send({ kind: 'url' });
  await request(t.app).get(new URL(canary.body.value as string).pathname);
  await t.tripwires.flush();
  await request(t.app)
    .post('/api/alert-channels')
    .set(as(who))
    .send({ kind: 'webhook', name: 'hook', url: 'https://93.184.216.34/x', secret: CHANNEL_SECRET })
    .expect(201);
  return { key: key.key, canaryId: canary.body.canary_id as string };
}

describe('GET /api/privacy/export', () => {
  it("streams everything held about the caller, without secrets, and nobody else's", async () => {
    const [who, other] = [await signUpAndLogIn(t.app), await signUpAndLogIn(t.app)];
    const mine = await withData(who);
    const theirs = await withData(other);

    const res = await request(t.app).get('/api/privacy/export').set(as(who));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="privacy-export-/);
    const archive = res.body;
    expect(archive).toMatchObject({
      format: 'tripwire-privacy-export/1',
      account: { id: who.userId, email: who.email, plan: 'free' },
    });
    expect(archive.api_keys).toEqual([
      expect.objectContaining({ name: 'ci', scopes: ['privacy:read'], revokedAt: null }),
    ]);
    expect(archive.canaries.map((c: { id: string }) => c.id)).toEqual([mine.canaryId]);
    expect(archive.threat_events).toHaveLength(1);
    expect(archive.threat_hits).toHaveLength(1);
    expect(archive.alert_channels).toEqual([expect.objectContaining({ name: 'hook' })]);
    expect(archive.evidence.length).toBeGreaterThanOrEqual(2);
    expect(archive.evidence.map((r: { seq: number }) => r.seq)).toEqual(
      [...archive.evidence.map((r: { seq: number }) => r.seq)].sort((a, b) => a - b),
    );
    for (const section of ['agents', 'honeypot_traps', 'rag_documents', 'alert_deliveries']) {
      expect(archive[section]).toEqual([]);
    }

    const text = res.text;
    for (const secret of ['passwordHash', 'secretHash', CHANNEL_SECRET, mine.key, PASSWORD]) {
      expect(text).not.toContain(secret);
    }
    for (const foreign of [other.userId, theirs.canaryId]) expect(text).not.toContain(foreign);
  });

  it('answers a key with privacy:read and refuses one without it', async () => {
    const who = await signUpAndLogIn(t.app);
    const { key } = await withData(who);
    const ok = await request(t.app).get('/api/privacy/export').set('X-API-Key', key);
    expect(ok.status).toBe(200);
    expect(ok.body.account.id).toBe(who.userId);
    const other = await createKey(t.app, who.token, { scopes: ['threats:read'] });
    const refused = await request(t.app).get('/api/privacy/export').set('X-API-Key', other.key);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      detail: 'The API key does not have the required scope: privacy:read',
    });
    expect((await request(t.app).get('/api/privacy/export')).status).toBe(401);
  });
});
