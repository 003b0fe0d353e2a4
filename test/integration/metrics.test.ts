import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { serveMetrics } from '../../src/metrics';
import { createKey, signUpAndLogIn } from '../support/accounts';
import { startAlertStack } from '../support/alert-stack';
import type { Receiver } from '../support/receiver';
import type { TestApp } from '../support/test-app';

let t: TestApp;
let receiver: Receiver;
let stop: () => Promise<void>;

beforeAll(async () => ({ t, receiver, stop } = await startAlertStack()));
afterAll(() => stop());

/** The value of one series in the text format, 0 when absent. */
async function series(name: string, labels: string): Promise<number> {
  const text = (await request(t.app).get('/metrics').expect(200)).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('GET /metrics', () => {
  it('when requests are served, then their latency is counted by route template and status', async () => {
    const who = await signUpAndLogIn(t.app);
    const labels = 'method="GET",route="/api/users/me",status="200"';
    const before = await series('http_request_duration_seconds_count', labels);
    await request(t.app).get('/api/users/me').set('Authorization', `Bearer ${who.token}`);
    expect(await series('http_request_duration_seconds_count', labels)).toBe(before + 1);
  });

  it('when a plan limit refuses, then the refusal and the sealed inspections are counted', async () => {
    const who = await signUpAndLogIn(t.app);
    const { key } = await createKey(t.app, who.token, { scopes: ['shield:write'] });
    // The 11th of the month is refused by the burst meter, or the monthly one past a minute's turn.
    const refused = async () =>
      (await series(
        'meter_refusals_total',
        'action="shield_inspections",error="burst_limit_exceeded"',
      )) +
      (await series(
        'meter_refusals_total',
        'action="shield_inspections",error="plan_limit_exceeded"',
      ));
    const sealed = 'kind="shield.inspection"';
    const [refusedBefore, sealedBefore] = [
      await refused(),
      await series('evidence_records_written_total', sealed),
    ];
    for (let i = 0; i < 11; i++) {
      await request(t.app)
        .post('/shield/inspect')
        .set('X-API-Key', key)
        .send({ user_id: who.userId, user_message: 'hello' });
    }
    expect(await refused()).toBe(refusedBefore + 1);
    expect(await series('evidence_records_written_total', sealed)).toBe(sealedBefore + 10);
  });

  it('when a route answers an error, then its latency carries the same route template as its successes', async () => {
    const who = await signUpAndLogIn(t.app);
    const { key } = await createKey(t.app, who.token, { scopes: ['shield:write'] });
    const route = (status: number) =>
      series(
        'http_request_duration_seconds_count',
        `method="POST",route="/shield/inspect",status="${status}"`,
      );
    const before = {
      ok: await route(200),
      invalid: await route(422),
      burst: await route(429),
      plan: await route(402),
    };
    await request(t.app)
      .post('/shield/inspect')
      .set('X-API-Key', key)
      .send({ user_id: who.userId, user_message: 'hello' })
      .expect(200);
    await request(t.app).post('/shield/inspect').set('X-API-Key', key).send({}).expect(422);
    // The free plan allows 10 a month: the 11th is refused by the burst meter (429), or by the
    // monthly one (402) when the minute turned meanwhile.
    let status = 200;
    for (let i = 0; i < 11 && status === 200; i++) {
      status = (
        await request(t.app)
          .post('/shield/inspect')
          .set('X-API-Key', key)
          .send({ user_id: who.userId, user_message: 'hello' })
      ).status;
    }
    expect([429, 402]).toContain(status);
    expect(await route(200)).toBeGreaterThan(before.ok);
    expect(await route(422)).toBe(before.invalid + 1);
    expect((await route(429)) + (await route(402))).toBe(before.burst + before.plan + 1);
  });

  it('when an alert is delivered, then its attempt and outcome are counted', async () => {
    const who = await signUpAndLogIn(t.app);
    const auth = { Authorization: `Bearer ${who.token}` };
    const channel = await request(t.app)
      .post('/api/alert-channels')
      .set(auth)
      .send({ kind: 'discord', name: 'd', url: receiver.url('/metrics-test') })
      .expect(201);
    const attempts = 'kind="discord",attempt="1",verdict="delivered"';
    const outcomes = 'kind="discord",outcome="delivered"';
    const [attemptsBefore, outcomesBefore] = [
      await series('alert_delivery_attempts_total', attempts),
      await series('alert_delivery_outcomes_total', outcomes),
    ];
    await request(t.app)
      .post(`/api/alert-channels/${channel.body.id as string}/test`)
      .set(auth)
      .expect(200);
    expect(await series('alert_delivery_attempts_total', attempts)).toBe(attemptsBefore + 1);
    expect(await series('alert_delivery_outcomes_total', outcomes)).toBe(outcomesBefore + 1);
  });
});

describe('the worker metrics endpoint', () => {
  it('when asked for /metrics, then it answers the registry; any other path 404', async () => {
    const server = await serveMetrics('127.0.0.1', 0);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const res = await fetch(`${base}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('alert_delivery_outcomes_total');
      expect((await fetch(`${base}/other`)).status).toBe(404);
    } finally {
      server.close();
    }
  });

  it('when the worker is not running, then /healthz answers 503; running, 200', async () => {
    let running = false;
    const server = await serveMetrics('127.0.0.1', 0, { healthy: () => running });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await fetch(`${base}/healthz`)).status).toBe(503);
      running = true;
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
    } finally {
      server.close();
    }
  });

  it("when the SDK's exporter does not answer, then /metrics still serves the worker's own", async () => {
    const closed = await serveMetrics('127.0.0.1', 0);
    const { port } = closed.address() as AddressInfo;
    closed.close();
    const server = await serveMetrics('127.0.0.1', 0, {
      healthy: () => true,
      sdkMetrics: `127.0.0.1:${port}`,
    });
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('alert_delivery_attempts_total');
    } finally {
      server.close();
    }
  });
});
