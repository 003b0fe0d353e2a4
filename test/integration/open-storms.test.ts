import request from 'supertest';
import { openStormsView } from '../../src/canaries/threats.routes';
import { createKey, signUpAndLogIn } from '../support/accounts';
import { bearer } from '../support/canary-accounts';
import { createTestApp, manualClock, testConfig, type TestApp } from '../support/test-app';

const time = manualClock();
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({
    clock: time.clock,
    config: testConfig({ STORM_WINDOW_SECONDS: '60' }),
  });
});
afterAll(async () => {
  await t.close();
});

describe('GET /api/threat-events/open-storms', () => {
  it('when a canary is hit twice from one source, then its storm is open until the window closes, for its owner only', async () => {
    const who = await signUpAndLogIn(t.app);
    const other = await signUpAndLogIn(t.app);
    const planted = await request(t.app)
      .post('/api/canaries')
      .set(bearer(who))
      .send({ kind: 'url', memo: 'wiki link' });
    const { canary_id, value } = planted.body as { canary_id: string; value: string };
    await request(t.app).get(new URL(value).pathname);
    time.advance(10_000);
    await request(t.app).get(new URL(value).pathname);
    await t.tripwires.flush();

    const open = async (as: Record<string, string>) =>
      openStormsView.parse(
        (await request(t.app).get('/api/threat-events/open-storms').set(as).expect(200)).body,
      ).storms;
    const [storm, ...more] = await open(bearer(who));
    expect(more).toEqual([]);
    expect(storm).toMatchObject({ canary_id, hit_count: 2 });
    expect(Date.parse(storm!.closes_at) - Date.parse(storm!.first_hit_at)).toBe(60_000);
    await expect(open(bearer(other))).resolves.toEqual([]);

    const canariesOnly = await createKey(t.app, who.token, { scopes: ['canaries:read'] });
    const refused = await request(t.app)
      .get('/api/threat-events/open-storms')
      .set('X-API-Key', canariesOnly.key);
    expect(refused.status).toBe(403);
    const reader = await createKey(t.app, who.token, { scopes: ['threats:read'] });
    await expect(open({ 'X-API-Key': reader.key })).resolves.toHaveLength(1);

    // 60 s after the first hit the storm is over: listed no more, the event stays.
    time.advance(50_000);
    await expect(open(bearer(who))).resolves.toEqual([]);
    const events = await request(t.app).get('/api/threat-events').set(bearer(who));
    expect(events.body.threat_events).toHaveLength(1);
  });
});
