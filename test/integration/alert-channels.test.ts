import request from 'supertest';
import { channelListView, channelView } from '../../src/alerts/channels.routes';
import { createKey, signUpAndLogIn, type SignedIn } from '../support/accounts';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const PUBLIC_URL = 'https://93.184.216.34/hooks/incoming';
const SECRET = 'a-webhook-secret-of-some-length';
const as = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });
const create = (who: SignedIn, body: object) =>
  request(t.app).post('/api/alert-channels').set(as(who)).send(body);

describe('alert channels', () => {
  it('when a generic webhook is created, then 201 shows it without its secret', async () => {
    const who = await signUpAndLogIn(t.app);
    const res = await create(who, {
      kind: 'webhook',
      name: 'SIEM',
      url: PUBLIC_URL,
      secret: SECRET,
    });
    expect(res.status).toBe(201);
    channelView.parse(res.body);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^chn_/),
      kind: 'webhook',
      name: 'SIEM',
      url: PUBLIC_URL,
      hasSecret: true,
      disabled: false,
      events: null,
      minLevel: null,
      // On by default for a new webhook channel: receivers can use the Standard Webhooks libraries.
      standardWebhooks: true,
      lastError: null,
      lastDeliveryAt: null,
      failingSince: null,
      disabledReason: null,
      disabledAt: null,
      createdAt: expect.any(String),
    });
    const listed = await request(t.app).get('/api/alert-channels').set(as(who));
    expect(channelListView.parse(listed.body).channels).toHaveLength(1);
    expect(JSON.stringify(listed.body)).not.toContain(SECRET);
    expect(
      JSON.stringify(
        (await request(t.app).get(`/api/alert-channels/${res.body.id}`).set(as(who))).body,
      ),
    ).not.toContain(SECRET);
  });

  it.each([
    [
      { kind: 'webhook', name: 'w', url: 'http://93.184.216.34/x', secret: SECRET },
      /^url: must use https/,
    ],
    [
      { kind: 'webhook', name: 'w', url: PUBLIC_URL, secret: 'short' },
      /^body\.secret: at least 16 characters/,
    ],
    [{ kind: 'webhook', name: 'w', url: PUBLIC_URL }, /^secret: Required/],
    [
      { kind: 'webhook', name: 'w', url: 'https://127.0.0.1/x', secret: SECRET },
      /^url: resolves to 127\.0\.0\.1/,
    ],
    [
      { kind: 'slack', name: 's', url: 'https://169.254.169.254/latest' },
      /^url: .*169\.254\.169\.254/,
    ],
    [
      { kind: 'slack', name: 's', url: PUBLIC_URL, secret: SECRET },
      /^secret: only webhook and pagerduty channels have a secret/,
    ],
    [{ kind: 'email', name: 'e', url: PUBLIC_URL }, /^body\.kind: /],
    [{ kind: 'discord', name: '', url: PUBLIC_URL }, /^body\.name: /],
  ])(
    'when created with %j, then 422 names the problem and nothing is stored',
    async (body, detail) => {
      const who = await signUpAndLogIn(t.app);
      const res = await create(who, body);
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(detail);
      expect((await request(t.app).get('/api/alert-channels').set(as(who))).body.channels).toEqual(
        [],
      );
    },
  );

  it('when a channel is renamed, disabled and deleted, then each change shows', async () => {
    const who = await signUpAndLogIn(t.app);
    const { id } = (await create(who, { kind: 'discord', name: 'ops', url: PUBLIC_URL })).body;
    const patched = await request(t.app)
      .patch(`/api/alert-channels/${id}`)
      .set(as(who))
      .send({ name: 'ops-alerts', disabled: true });
    expect(patched.body).toMatchObject({ name: 'ops-alerts', disabled: true });
    const bad = await request(t.app)
      .patch(`/api/alert-channels/${id}`)
      .set(as(who))
      .send({ url: 'https://10.0.0.1/' });
    expect(bad.status).toBe(422);
    expect((await request(t.app).delete(`/api/alert-channels/${id}`).set(as(who))).status).toBe(
      204,
    );
    expect((await request(t.app).get(`/api/alert-channels/${id}`).set(as(who))).status).toBe(404);
  });

  it("when another account's channel is read, changed or deleted, then 403 and it is unchanged", async () => {
    const owner = await signUpAndLogIn(t.app);
    const other = await signUpAndLogIn(t.app);
    const { id } = (await create(owner, { kind: 'slack', name: 'mine', url: PUBLIC_URL })).body;
    expect((await request(t.app).get(`/api/alert-channels/${id}`).set(as(other))).status).toBe(403);
    expect(
      (
        await request(t.app)
          .patch(`/api/alert-channels/${id}`)
          .set(as(other))
          .send({ disabled: true })
      ).status,
    ).toBe(403);
    expect((await request(t.app).delete(`/api/alert-channels/${id}`).set(as(other))).status).toBe(
      403,
    );
    expect(
      (await request(t.app).get(`/api/alert-channels/${id}`).set(as(owner))).body,
    ).toMatchObject({ name: 'mine', disabled: false });
  });

  it('when an API key is used instead of a session, then 401', async () => {
    const who = await signUpAndLogIn(t.app);
    const { key } = await createKey(t.app, who.token);
    expect((await request(t.app).get('/api/alert-channels').set('X-API-Key', key)).status).toBe(
      401,
    );
  });

  it('when private targets are allowed (development), then a loopback receiver is accepted', async () => {
    const dev = await createTestApp({
      config: testConfig({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' }),
    });
    try {
      const who = await signUpAndLogIn(dev.app);
      const res = await request(dev.app).post('/api/alert-channels').set(as(who)).send({
        kind: 'webhook',
        name: 'local',
        url: 'https://127.0.0.1:8443/hook',
        secret: SECRET,
      });
      expect(res.status).toBe(201);
    } finally {
      await dev.close();
    }
  });
});
