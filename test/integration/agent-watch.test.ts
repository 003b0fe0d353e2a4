import request from 'supertest';
import { agentView } from '../../src/agent/agent.routes';
import { threatEventListView } from '../../src/canaries/threats.routes';
import { createKey, signUpAndLogIn } from '../support/accounts';
import { startAlertStack } from '../support/alert-stack';
import type { Receiver } from '../support/receiver';
import type { TestApp } from '../support/test-app';

let t: TestApp;
let receiver: Receiver;
let stop: () => Promise<void>;

beforeAll(async () => ({ t, receiver, stop } = await startAlertStack()));
afterAll(() => stop());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function account() {
  const who = await signUpAndLogIn(t.app);
  const alertsPath = `/alerts/${who.userId}`;
  await request(t.app)
    .post('/api/alert-channels')
    .set({ Authorization: `Bearer ${who.token}` })
    .send({ kind: 'slack', name: 'ops', url: receiver.url(alertsPath) })
    .expect(201);
  const { key } = await createKey(t.app, who.token, { scopes: ['agent:read', 'agent:write'] });
  const alerts = () =>
    receiver.hitsOn(alertsPath).map((h) => JSON.parse(h.rawBody.toString()) as unknown);
  return { who, key, alerts, alertsPath };
}

async function register(key: string, seconds: number) {
  const res = await request(t.app)
    .post('/agent/agents')
    .set('X-API-Key', key)
    .send({ name: 'support-bot', heartbeat_interval_seconds: seconds, platform: 'LangChain' })
    .expect(201);
  return agentView.parse(res.body).agent_id;
}

describe('agent watch', () => {
  it('when an agent goes silent past its interval, then exactly one alert, with no attacker', async () => {
    const a = await account();
    await register(a.key, 2);
    await receiver.waitFor(a.alertsPath, 1, 15_000);
    await sleep(5_000); // two more intervals of silence
    expect(a.alerts()).toHaveLength(1);
    const events = threatEventListView.parse(
      (
        await request(t.app)
          .get('/api/threat-events')
          .set({ Authorization: `Bearer ${a.who.token}` })
      ).body,
    ).threat_events;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ canary_kind: 'agent', alert: { attacker: { ip: '' } } });
    expect(events[0]!.alert!.interpretation).toMatch(
      /sent no heartbeat for \d+ s \(expected every 2 s\)/,
    );
  }, 30_000);

  it('when heartbeats keep coming, then no alert', async () => {
    const a = await account();
    const id = await register(a.key, 3);
    for (let i = 0; i < 6; i++) {
      await request(t.app)
        .post(`/agent/agents/${id}/heartbeat`)
        .set('X-API-Key', a.key)
        .expect(202);
      await sleep(1_000);
    }
    expect(a.alerts()).toEqual([]);
    const agent = await request(t.app).get(`/agent/agents/${id}`).set('X-API-Key', a.key);
    expect(agent.body.last_heartbeat_at).toEqual(expect.any(String));
    await request(t.app).delete(`/agent/agents/${id}`).set('X-API-Key', a.key).expect(204);
  }, 30_000);

  it('when an agent reports a blocked skill, then a HIGH alert names the skill', async () => {
    const a = await account();
    const id = await register(a.key, 3600);
    await request(t.app)
      .post(`/agent/agents/${id}/blocked-skill`)
      .set('X-API-Key', a.key)
      .send({ skill: 'shell.exec', reason: 'prompt asked to run curl | sh' })
      .expect(202);
    await receiver.waitFor(a.alertsPath, 1, 15_000);
    expect(a.alerts()).toHaveLength(1);
    const [event] = threatEventListView.parse(
      (
        await request(t.app)
          .get('/api/threat-events')
          .set({ Authorization: `Bearer ${a.who.token}` })
      ).body,
    ).threat_events;
    expect(event!.alert).toMatchObject({ alert_level: 'HIGH', attacker: { ip: '' } });
    expect(event!.alert!.interpretation).toContain('shell.exec');
    await request(t.app).delete(`/agent/agents/${id}`).set('X-API-Key', a.key).expect(204);
  }, 30_000);

  it('when an agent is retired, then its heartbeats are 404 and nothing more is watched', async () => {
    const a = await account();
    const id = await register(a.key, 3600);
    await request(t.app).delete(`/agent/agents/${id}`).set('X-API-Key', a.key).expect(204);
    await request(t.app).post(`/agent/agents/${id}/heartbeat`).set('X-API-Key', a.key).expect(404);
  });

  it('when another account or a key without agent:write calls, then 403', async () => {
    const a = await account();
    const other = await account();
    const id = await register(a.key, 3600);
    await request(t.app).get(`/agent/agents/${id}`).set('X-API-Key', other.key).expect(403);
    await request(t.app)
      .post(`/agent/agents/${id}/heartbeat`)
      .set('X-API-Key', other.key)
      .expect(403);
    const { key: reader } = await createKey(t.app, a.who.token, { scopes: ['agent:read'] });
    await request(t.app).get('/agent/agents').set('X-API-Key', reader).expect(200);
    await request(t.app)
      .post('/agent/agents')
      .set('X-API-Key', reader)
      .send({ name: 'x', heartbeat_interval_seconds: 60 })
      .expect(403);
    await request(t.app).delete(`/agent/agents/${id}`).set('X-API-Key', a.key).expect(204);
  });

  it.each([
    [{ name: 'x', heartbeat_interval_seconds: 0 }, 'heartbeat_interval_seconds'],
    [{ heartbeat_interval_seconds: 60 }, 'name'],
    [{ name: 'x', heartbeat_interval_seconds: 60, owner: 'me' }, 'owner'],
  ])('when registering with %j, then 422 names %s', async (body, field) => {
    const a = await account();
    const res = await request(t.app).post('/agent/agents').set('X-API-Key', a.key).send(body);
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain(field);
  });
});
