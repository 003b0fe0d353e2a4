import { randomUUID } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import request from 'supertest';
import { z } from 'zod';
import { startAlert } from '../../src/alerts/alert-workflows';
import {
  bulkResendView,
  channelTestView,
  deliveryListView,
  resendView,
} from '../../src/alerts/channels.routes';
import { verifyWebhookSignature } from '../../src/alerts/webhook-signature';
import { searchAttributes } from '../../workflows/shared';
import { signUpAndLogIn, type SignedIn } from '../support/accounts';
import { startAlertStack } from '../support/alert-stack';
import { alertResults, tripwirePayload } from '../support/alerts';
import type { Receiver } from '../support/receiver';
import {
  pagerDutyAnswer,
  pagerDutyChangeEventSchema,
  pagerDutyEventSchema,
  StandIn,
  teamsMessageSchema,
} from '../support/stand-ins';
import type { TestApp } from '../support/test-app';

let t: TestApp;
let receiver: Receiver;
let stop: () => Promise<void>;

beforeAll(async () => ({ t, receiver, stop } = await startAlertStack()));
afterAll(() => stop());

const SECRET = 'operations-test-secret';
const as = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });

async function channel(who: SignedIn, fields: Record<string, unknown>) {
  const res = await request(t.app)
    .post('/api/alert-channels')
    .set(as(who))
    .send({ kind: 'webhook', name: 'hook', secret: SECRET, ...fields });
  if (res.status !== 201) throw new Error(`channel: ${res.status} ${res.text}`);
  return res.body.id as string;
}

const deliveries = async (who: SignedIn, id: string) =>
  deliveryListView.parse(
    (await request(t.app).get(`/api/alert-channels/${id}/deliveries`).set(as(who))).body,
  ).deliveries;

const finished = (workflowId: string) => t.temporal.client.workflow.getHandle(workflowId).result();

/**
 * A threat alert with this level, started as the tripwire path does, awaited to its end: its
 * channels' outcomes, also when it reached none (the workflow then fails carrying them).
 */
async function alert(who: SignedIn, level: 'CRITICAL' | 'HIGH' | 'MEDIUM', n = 0) {
  const threatEventId = `thr_${who.userId}_${level}_${n}`;
  const payload = tripwirePayload(threatEventId);
  payload.data.alertLevel = level;
  const handle = await startAlert(t.temporal, { accountId: who.userId, payload, threatEventId });
  return { handle, result: await alertResults(handle) };
}

describe('resend', () => {
  it('when a failed delivery is resent after the receiver recovers, then it arrives with the same delivery id, freshly signed, recorded as a new delivery', async () => {
    const who = await signUpAndLogIn(t.app);
    const id = await channel(who, { url: receiver.url('/flaky') });
    receiver.breakWith(503);
    const test = channelTestView.parse(
      (await request(t.app).post(`/api/alert-channels/${id}/test`).set(as(who))).body,
    );
    receiver.breakWith(null);
    expect(test.outcome).toBe('failed');

    const res = await request(t.app)
      .post(`/api/alert-channels/${id}/deliveries/${encodeURIComponent(test.deliveryId)}/resend`)
      .set(as(who));

    expect(res.status).toBe(202);
    const resent = resendView.parse(res.body);
    expect(resent.resendOf).toBe(test.deliveryId);
    await finished(resent.workflowId);
    const hits = receiver.hitsOn('/flaky');
    expect(hits).toHaveLength(4);
    const last = hits[3]!;
    expect(last.headers['x-service-delivery']).toBe(test.deliveryId);
    expect(Number(last.headers['x-service-timestamp'])).toBeGreaterThanOrEqual(
      Number(hits[0]!.headers['x-service-timestamp']),
    );
    expect(
      verifyWebhookSignature(SECRET, {
        rawBody: last.rawBody,
        timestamp: String(last.headers['x-service-timestamp']),
        signature: String(last.headers['x-service-signature']),
      }),
    ).toEqual({ ok: true });
    expect(last.rawBody.toString()).toBe(hits[0]!.rawBody.toString());
    const records = await deliveries(who, id);
    expect(records.map((r) => [r.deliveryId, r.outcome, r.resendOf])).toEqual([
      [resent.deliveryId, 'delivered', test.deliveryId],
      [test.deliveryId, 'failed', null],
    ]);
  });

  it('when a delivery is unknown, belongs to another channel or another account, then 404 or 403 and nothing is sent', async () => {
    const who = await signUpAndLogIn(t.app);
    const other = await signUpAndLogIn(t.app);
    const mine = await channel(who, { url: receiver.url('/resend-refused') });
    const theirs = await channel(other, { url: receiver.url('/resend-refused') });
    const test = (await request(t.app).post(`/api/alert-channels/${theirs}/test`).set(as(other)))
      .body.deliveryId as string;
    const resend = (who2: SignedIn, channelId: string, deliveryId: string) =>
      request(t.app)
        .post(
          `/api/alert-channels/${channelId}/deliveries/${encodeURIComponent(deliveryId)}/resend`,
        )
        .set(as(who2));
    const unknown = await resend(who, mine, 'channel-test-nope:chn_x');
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toMatch(/No delivery/);
    expect((await resend(who, mine, test)).status).toBe(404);
    expect((await resend(who, theirs, test)).status).toBe(403);
    expect(receiver.hitsOn('/resend-refused')).toHaveLength(1);
  });

  it('when every failed delivery since an outage began is resent, then each alert arrives once, and a second bulk resend sends nothing', async () => {
    const who = await signUpAndLogIn(t.app);
    const id = await channel(who, { url: receiver.url('/outage') });
    const since = new Date().toISOString();
    receiver.breakWith(502);
    const failed = [await alert(who, 'HIGH', 1), await alert(who, 'CRITICAL', 2)];
    receiver.breakWith(null);
    expect(failed.map((f) => f.result.results.find((r) => r.channelId === id)?.outcome)).toEqual([
      'failed',
      'failed',
    ]);
    const bulk = (body: object) =>
      request(t.app)
        .post(`/api/alert-channels/${id}/deliveries/resend-failed`)
        .set(as(who))
        .send(body);

    const res = await bulk({ since });

    expect(res.status).toBe(202);
    const { resent, more } = bulkResendView.parse(res.body);
    expect(more).toBe(false);
    expect(resent.map((r) => r.resendOf).sort()).toEqual(
      failed.map((f) => `${f.handle.workflowId}:${id}`).sort(),
    );
    await Promise.all(resent.map((r) => finished(r.workflowId)));
    const delivered = receiver.hitsOn('/outage').slice(6);
    expect(delivered.map((h) => h.headers['x-service-delivery']).sort()).toEqual(
      resent.map((r) => r.resendOf).sort(),
    );
    expect(bulkResendView.parse((await bulk({ since })).body).resent).toEqual([]);
    const invalid = await bulk({ since: 'yesterday' });
    expect(invalid.status).toBe(422);
    expect(invalid.body.detail).toMatch(/^body\.since: /);
  });
});

describe('routing', () => {
  /** Three channels on `<prefix>-all`, `-critical` and `-tests`: every alert, CRITICAL only, tests only. */
  async function subscribers(who: SignedIn, prefix: string) {
    return {
      everything: await channel(who, { url: receiver.url(`${prefix}-all`) }),
      critical: await channel(who, {
        url: receiver.url(`${prefix}-critical`),
        minLevel: 'CRITICAL',
      }),
      testsOnly: await channel(who, {
        url: receiver.url(`${prefix}-tests`),
        events: ['canary.test_alert'],
      }),
    };
  }

  it('when channels subscribe to a minimum level or to event kinds, then an alert reaches only those that want it, and a test reaches the tested one', async () => {
    const who = await signUpAndLogIn(t.app);
    const { everything, critical, testsOnly } = await subscribers(who, '/route');

    const high = await alert(who, 'HIGH', 3);
    const crit = await alert(who, 'CRITICAL', 4);

    const reached = (r: typeof high) => r.result.results.map((x) => x.channelId);
    expect(reached(high)).toEqual(expect.arrayContaining([everything]));
    expect(reached(high)).not.toContain(critical);
    expect(reached(high)).not.toContain(testsOnly);
    expect(reached(crit)).toEqual(expect.arrayContaining([everything, critical]));
    expect(receiver.hitsOn('/route-all')).toHaveLength(2);
    expect(receiver.hitsOn('/route-critical')).toHaveLength(1);
    expect(receiver.hitsOn('/route-tests')).toHaveLength(0);
    const test = await request(t.app).post(`/api/alert-channels/${critical}/test`).set(as(who));
    expect(test.body.outcome).toBe('delivered');
    expect(receiver.hitsOn('/route-critical')).toHaveLength(2);
  });

  it('when a canary fires, then its alert, read with its channels, reaches those that subscribe to its level and kind, and its event keeps the payload sent', async () => {
    const who = await signUpAndLogIn(t.app);
    const { everything, critical, testsOnly } = await subscribers(who, '/fired');
    const planted = await request(t.app)
      .post('/api/canaries')
      .set(as(who))
      .send({ kind: 'url', memo: 'routing' })
      .expect(201);
    await request(t.app)
      .get(new URL((planted.body as { value: string }).value).pathname)
      .set('user-agent', 'curl/8')
      .expect(200);
    await t.tripwires.flush();
    const event = await t.mongo.db
      .collection<{ _id: string; alert: { data: { alertLevel: string } } | null }>('threat_events')
      .findOne({ canaryId: planted.body.canary_id as string });
    const { results } = (await finished(`alert-${event!._id}`)) as {
      results: { channelId: string; outcome: string }[];
    };

    const [sent] = receiver.hitsOn('/fired-all');
    const payload = JSON.parse(sent!.rawBody.toString()) as { data: { alertLevel: string } };
    const reached = results.filter((r) => r.outcome === 'delivered').map((r) => r.channelId);
    const isCritical = payload.data.alertLevel === 'CRITICAL';
    expect(reached.sort()).toEqual((isCritical ? [everything, critical] : [everything]).sort());
    expect(reached).not.toContain(testsOnly);
    expect(receiver.hitsOn('/fired-critical')).toHaveLength(isCritical ? 1 : 0);
    expect(receiver.hitsOn('/fired-tests')).toHaveLength(0);
    const kept = await t.mongo.db
      .collection<{ _id: string; alert: unknown }>('threat_events')
      .findOne({ _id: event!._id });
    expect(kept!.alert).toEqual(payload);
  });

  it('when routing is set to something unknown, then 422 names the field and nothing changes', async () => {
    const who = await signUpAndLogIn(t.app);
    const id = await channel(who, { url: receiver.url('/route-bad') });
    for (const [body, field] of [
      [{ minLevel: 'LOW' }, /^body\.minLevel: /],
      [{ events: ['canary.other'] }, /^body\.events\[0\]: /],
      [{ events: [] }, /^body\.events: /],
    ] as const) {
      const res = await request(t.app).patch(`/api/alert-channels/${id}`).set(as(who)).send(body);
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(field);
    }
    const stored = (await request(t.app).get(`/api/alert-channels/${id}`).set(as(who))).body;
    expect(stored).toMatchObject({ events: null, minLevel: null });
  });
});

describe('the Temporal UI', () => {
  it('when an alert ends with one channel failed and one delivered, then its search attributes, summaries and details tell so', async () => {
    const who = await signUpAndLogIn(t.app);
    await channel(who, { url: receiver.url('/ui-ok'), name: 'Ops receiver' });
    await channel(who, { url: receiver.url('/status/410'), name: 'Old receiver' });

    const { handle, result } = await alert(who, 'HIGH', 5);

    expect(
      result.results
        .filter((r) => r.kind === 'webhook')
        .map((r) => r.outcome)
        .sort(),
    ).toEqual(['delivered', 'failed']);
    const described = await handle.describe();
    expect(described.typedSearchAttributes.get(searchAttributes.deliveryOutcome)).toBe(
      'partly_failed',
    );
    expect(described.typedSearchAttributes.get(searchAttributes.canaryId)).toBe('cnr_test');
    expect(await described.staticSummary()).toBe('HIGH alert · canary cnr_test');
    expect(await described.staticDetails()).toContain(`\`${who.userId}\``);
    const summaries: string[] = [];
    for (const event of (await handle.fetchHistory()).events ?? []) {
      const summary = event.userMetadata?.summary;
      if (summary) summaries.push(defaultPayloadConverter.fromPayload(summary));
    }
    // Both first attempts were final: sent and recorded with the outcomes by one local activity,
    // whose summary is written before the channels are read; the details name each outcome.
    expect(summaries).toContain('send the alert: first attempt to every channel');
    expect(summaries.filter((s) => s.startsWith('send to '))).toEqual([]);
    const { currentDetails } = await handle.query<{ currentDetails: string }>(
      '__temporal_workflow_metadata',
    );
    expect(currentDetails).toContain('webhook "Old receiver": 410');
    expect(currentDetails).toContain('webhook "Ops receiver": 200');
    // Visibility is eventually consistent: the operator's filter finds the alert once indexed.
    const query = `AccountId = "${who.userId}" AND DeliveryOutcome = "partly_failed"`;
    let found: string[] = [];
    for (let i = 0; i < 50 && !found.length; i++) {
      found = [];
      for await (const w of t.temporal.client.workflow.list({ query })) found.push(w.workflowId);
      if (!found.length) await new Promise((r) => setTimeout(r, 200));
    }
    expect(found).toEqual([handle.workflowId]);
  });

  it('when an alert reaches every channel, then it carries no DeliveryOutcome and the runs API still calls it delivered', async () => {
    const who = await signUpAndLogIn(t.app);
    await channel(who, { url: receiver.url('/ui-ok') });
    const delivered = await alert(who, 'HIGH', 6);
    await channel(who, { url: receiver.url('/status/410') });
    const partial = await alert(who, 'HIGH', 7);

    expect(delivered.result.results.find((r) => r.kind === 'webhook')?.outcome).toBe('delivered');
    const described = await delivered.handle.describe();
    expect(described.typedSearchAttributes.get(searchAttributes.deliveryOutcome)).toBeUndefined();
    // Visibility is eventually consistent: both runs are listed once their close is indexed.
    type Run = { workflow_id: string; status: string; outcome: string | null };
    let runs: Run[] = [];
    for (let i = 0; i < 50 && runs.length < 2; i++) {
      const res = await request(t.app).get('/api/workflow-runs?status=completed').set(as(who));
      runs = res.body.workflow_runs ?? [];
      if (runs.length < 2) await new Promise((r) => setTimeout(r, 200));
    }
    expect(Object.fromEntries(runs.map((r) => [r.workflow_id, r.outcome]))).toEqual({
      [delivered.handle.workflowId]: 'delivered',
      [partial.handle.workflowId]: 'partly_failed',
    });
    // The operator's filters that docs/alert-delivery.md gives, each finding its one alert.
    const listed = async (filter: string) => {
      const ids: string[] = [];
      const query = `AccountId = "${who.userId}" AND ${filter}`;
      for await (const w of t.temporal.client.workflow.list({ query })) ids.push(w.workflowId);
      return ids;
    };
    expect(await listed('DeliveryOutcome IS NOT NULL')).toEqual([partial.handle.workflowId]);
    expect(
      await listed(
        'WorkflowType = "alertWorkflow" AND ExecutionStatus = "Completed" AND DeliveryOutcome IS NULL',
      ),
    ).toEqual([delivered.handle.workflowId]);
  });
});

describe('Teams and PagerDuty', () => {
  it('when a Teams channel is tested, then the stand-in accepts the documented Adaptive Card message', async () => {
    const teams = await StandIn.start(teamsMessageSchema, () => ({ status: 202, json: {} }));
    try {
      const who = await signUpAndLogIn(t.app);
      const id = await channel(who, { kind: 'teams', secret: undefined, url: teams.url('/wf') });
      const res = await request(t.app).post(`/api/alert-channels/${id}/test`).set(as(who));
      expect(res.body).toMatchObject({ outcome: 'delivered', status: 202 });
      expect(teams.refused).toEqual([]);
      expect(JSON.stringify(teams.accepted[0])).toContain('[TEST]');
    } finally {
      await teams.stop();
    }
  });

  const routingKey = 'R0123456789abcdef0123456789abcde';
  /** An account with a PagerDuty channel whose Events API is the stand-in. */
  async function pagerDutyChannel(pagerDuty: StandIn) {
    const who = await signUpAndLogIn(t.app);
    const url = pagerDuty.url('/v2/enqueue');
    return { who, id: await channel(who, { kind: 'pagerduty', secret: routingKey, url }) };
  }

  it('when a PagerDuty channel is tested, then the stand-in gets a change event, which opens no incident, and its answer is kept', async () => {
    const pagerDuty = await StandIn.start(
      z.union([pagerDutyEventSchema, pagerDutyChangeEventSchema]),
      () => ({ status: 202, json: { status: 'success', message: 'Change event processed' } }),
    );
    try {
      const { who, id } = await pagerDutyChannel(pagerDuty);
      const res = await request(t.app).post(`/api/alert-channels/${id}/test`).set(as(who));
      expect(res.body).toMatchObject({ outcome: 'delivered', status: 202 });
      expect(pagerDuty.refused).toEqual([]);
      expect(pagerDuty.paths).toEqual(['/v2/change/enqueue']);
      expect(pagerDutyChangeEventSchema.parse(pagerDuty.accepted[0])).toMatchObject({
        routing_key: routingKey,
        payload: { summary: expect.stringMatching(/^\[TEST\] /) },
      });
      expect(pagerDuty.accepted[0]).not.toHaveProperty('event_action');
      const [record] = await deliveries(who, id);
      expect(record!.attempts[0]!.answer).toEqual({
        contentType: 'application/json',
        body: JSON.stringify({ status: 'success', message: 'Change event processed' }),
      });
    } finally {
      await pagerDuty.stop();
    }
  });

  it('when a PagerDuty channel gets a real alert, then the stand-in gets a trigger event keyed by the delivery id', async () => {
    const pagerDuty = await StandIn.start(pagerDutyEventSchema, pagerDutyAnswer);
    try {
      const { who, id } = await pagerDutyChannel(pagerDuty);
      const threatEventId = `thr_${randomUUID()}`;
      const handle = await startAlert(t.temporal, {
        accountId: who.userId,
        payload: tripwirePayload(threatEventId),
        threatEventId,
      });
      const { results } = await handle.result();
      const delivered = results.find((r) => r.channelId === id)!;
      expect(delivered).toMatchObject({ outcome: 'delivered', status: 202 });
      expect(pagerDuty.paths).toEqual(['/v2/enqueue']);
      expect(pagerDuty.accepted[0]).toMatchObject({
        routing_key: routingKey,
        event_action: 'trigger',
        dedup_key: delivered.deliveryId,
      });
    } finally {
      await pagerDuty.stop();
    }
  });

  it('when a PagerDuty channel has no routing key, or a Teams channel has a secret, then 422', async () => {
    const who = await signUpAndLogIn(t.app);
    const create = (body: object) =>
      request(t.app).post('/api/alert-channels').set(as(who)).send(body);
    const noKey = await create({ kind: 'pagerduty', name: 'p', url: receiver.url('/p') });
    expect(noKey.status).toBe(422);
    expect(noKey.body.detail).toMatch(
      /^secret: Required for a pagerduty channel \(Events API v2 routing key\)/,
    );
    const secretTeams = await create({
      kind: 'teams',
      name: 't',
      url: receiver.url('/t'),
      secret: SECRET,
    });
    expect(secretTeams.status).toBe(422);
    expect(secretTeams.body.detail).toMatch(/^secret: only webhook and pagerduty channels/);
  });
});
