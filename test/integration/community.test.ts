import request from 'supertest';
import { createKey, signUpAndLogIn, type SignedIn } from '../support/accounts';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';

let t: TestApp;
const as = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });

const SEEN_BY_THREE = '93.184.216.34';
const SEEN_BY_TWO_MEMBERS = '8.8.4.4';
const DOCUMENTATION = '198.51.100.7';
const PRIVATE = '10.1.2.3';

let members: SignedIn[];
let outsider: SignedIn;

async function plantUrl(who: SignedIn) {
  const res = await request(t.app).post('/api/canaries').set(as(who)).send({ kind: 'url' });
  if (res.status !== 201) throw new Error(`plant: ${res.status} ${res.text}`);
  return res.body as { value: string };
}

const fireFrom = (canary: { value: string }, ip: string) =>
  request(t.app).get(new URL(canary.value).pathname).set('X-Forwarded-For', ip);

const optIn = async (who: SignedIn) => {
  const res = await request(t.app)
    .patch('/api/settings')
    .set(as(who))
    .send({ community_sharing: true });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ telegram_chat_id: null, community_sharing: true });
};

const indicators = (who: SignedIn) => request(t.app).get('/api/community/indicators').set(as(who));

beforeAll(async () => {
  // The test's requests come from loopback, which may then name the source in X-Forwarded-For.
  t = await createTestApp({ config: testConfig({ TRUST_PROXY: 'loopback' }) });
  members = [];
  for (let i = 0; i < 3; i++) members.push(await signUpAndLogIn(t.app));
  outsider = await signUpAndLogIn(t.app);
  for (const who of members) await optIn(who);
  for (const [i, who] of members.entries()) {
    const canary = await plantUrl(who);
    for (const ip of [SEEN_BY_THREE, DOCUMENTATION, PRIVATE]) await fireFrom(canary, ip);
    if (i < 2) await fireFrom(canary, SEEN_BY_TWO_MEMBERS);
  }
  // The outsider's hit from the third address does not make it three: it has not opted in.
  await fireFrom(await plantUrl(outsider), SEEN_BY_TWO_MEMBERS);
  await fireFrom(await plantUrl(outsider), SEEN_BY_THREE);
  await t.tripwires.flush();
}, 120_000);
afterAll(() => t.close());

describe('GET /api/community/indicators', () => {
  it('lists public addresses seen by enough opted-in workspaces, never which ones', async () => {
    const res = await indicators(members[0]!);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      sharing: true,
      indicators: [
        {
          ip: SEEN_BY_THREE,
          hits: 3,
          workspaces: 3,
          first_seen: expect.any(String),
          last_seen: expect.any(String),
        },
      ],
    });
    expect(JSON.stringify(res.body)).not.toContain(members[1]!.userId);
    const [indicator] = res.body.indicators;
    expect(Date.parse(indicator.first_seen)).toBeLessThanOrEqual(Date.parse(indicator.last_seen));
  });

  it('shows an account that has not opted in nothing', async () => {
    const res = await indicators(outsider);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ sharing: false, indicators: [] });
  });

  it('stops sharing and showing once an account opts out again', async () => {
    const leaver = members[2]!;
    await request(t.app).patch('/api/settings').set(as(leaver)).send({ community_sharing: false });
    expect((await indicators(leaver)).body).toEqual({ sharing: false, indicators: [] });
    expect((await indicators(members[0]!)).body.indicators).toEqual([]);
    await optIn(leaver);
    expect((await indicators(members[0]!)).body.indicators).toHaveLength(1);
  });

  it('refuses a settings value that is not a boolean, and changes nothing', async () => {
    const res = await request(t.app)
      .patch('/api/settings')
      .set(as(outsider))
      .send({ community_sharing: 'yes' });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body.detail)).toContain('community_sharing');
    expect(
      (await request(t.app).get('/api/settings').set(as(outsider))).body.community_sharing,
    ).toBe(false);
  });

  it('answers a key with community:read and refuses one without it', async () => {
    const who = members[0]!;
    const reader = await createKey(t.app, who.token, { scopes: ['community:read'] });
    const ok = await request(t.app).get('/api/community/indicators').set('X-API-Key', reader.key);
    expect(ok.status).toBe(200);
    expect(ok.body.indicators).toHaveLength(1);
    const other = await createKey(t.app, who.token, { scopes: ['threats:read'] });
    const refused = await request(t.app)
      .get('/api/community/indicators')
      .set('X-API-Key', other.key);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      detail: 'The API key does not have the required scope: community:read',
    });
  });
});
