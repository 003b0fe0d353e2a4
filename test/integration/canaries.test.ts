import nodemailer from 'nodemailer';
import request from 'supertest';
import {
  threatDeliveriesView,
  threatEventListView,
  threatLogView,
} from '../../src/canaries/threats.routes';
import { startDecoyMailServer, type DecoyMailServer } from '../../src/canaries/listeners/smtp';
import { generateApiKey } from '../../src/keys/api-key-format';
import { createKey, signUpAndLogIn, type SignedIn } from '../support/accounts';
import { bearer, canaryAccounts } from '../support/canary-accounts';
import { Receiver } from '../support/receiver';
import { createTestApp, testConfig, testLogger, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';
import { WorkflowNotFoundError } from '@temporalio/client';
import { startStormFollowUp } from '../../src/alerts/alert-workflows';
import type { alertWorkflow } from '../../workflows';
import { followUpIdOf, type ChannelResult } from '../../workflows/shared';

const ATTACKER = '8.8.8.8';
const GATHER = { quietMs: 1_000, maxMs: 30_000 };

/**
 * Every result of a storm's alert and of its follow-up, if one was started (call once the
 * tripwires are flushed: then every start for the storm has been made).
 */
async function stormResults(threatEventId: string): Promise<ChannelResult[]> {
  const { workflow } = t.temporal.client;
  const { results } = await workflow
    .getHandle<typeof alertWorkflow>(`alert-${threatEventId}`)
    .result();
  const later = await workflow
    .getHandle<typeof alertWorkflow>(followUpIdOf(threatEventId))
    .result()
    .catch((err: unknown) => {
      if (err instanceof WorkflowNotFoundError) return { results: [] };
      throw err;
    });
  return [...results, ...later.results];
}

/** The results of deliveries that went out (the built-in channels are unconfigured here). */
const sent = (results: ChannelResult[]) => results.filter((r) => r.outcome !== 'skipped');

let t: TestApp;
let worker: { stop(): Promise<void> };
let receiver: Receiver;
let mail: DecoyMailServer;

beforeAll(async () => {
  t = await createTestApp({
    config: testConfig({
      TRUST_PROXY: 'loopback',
      ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      ALERT_GATHER_MS: String(GATHER.quietMs),
      PUBLIC_BASE_URL: 'https://tripwire.example.com',
      DECOY_EMAIL_DOMAIN: 'decoys.example.com',
    }),
  });
  worker = await startTestWorker(t.mongo.db, t.config.TEMPORAL_TASK_QUEUE);
  receiver = await Receiver.start();
  mail = await startDecoyMailServer({
    host: '127.0.0.1',
    port: 0,
    tripwires: t.tripwires,
    log: testLogger(t.config),
  });
});
afterAll(async () => {
  await mail.close();
  await worker.stop();
  await receiver.stop();
  await t.close();
});

const as = bearer;

// A fresh account whose alerts go to its own receiver path; planting; verified alerts.
const account = () => canaryAccounts(t.app, receiver).account();
const plant = (who: SignedIn, kind: string, extra: object = {}) =>
  canaryAccounts(t.app, receiver).plant(who, kind, extra);
const alertsAt = (path: string, count?: number, timeoutMs?: number) =>
  canaryAccounts(t.app, receiver).alertsAt(path, count, timeoutMs);

describe('a decoy API key presented to the API', () => {
  it('when used, then the caller gets the invalid-key answer and a signed, enriched alert goes out', async () => {
    const { who, path } = await account();
    const canary = await plant(who, 'api_key', { platform: 'GitHub Actions' });
    expect(canary.value).toMatch(/^svc_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);

    const decoy = await request(t.app)
      .get('/api/canaries')
      .set('X-API-Key', canary.value)
      .set('X-Forwarded-For', ATTACKER)
      .set('User-Agent', 'python-requests/2.31');
    const invalid = await request(t.app)
      .get('/api/canaries')
      .set('X-API-Key', generateApiKey().value);
    expect(decoy.status).toBe(401);
    expect(decoy.body).toEqual(invalid.body);

    const [alert] = await alertsAt(path);
    expect(alert).toMatchObject({
      event: 'canary.tripwire_triggered',
      data: {
        canaryId: canary.canary_id,
        platform: 'GitHub Actions',
        canaryAgeDays: 0,
        attacker: { ip: ATTACKER, country: 'US' },
        threatEventId: expect.stringMatching(/^thr_/),
      },
    });
    expect(alert!.data.mailServer).toBeUndefined();
    expect(alert!.data.riskScore).toBeGreaterThanOrEqual(50);

    // The alert is kept on its event by the seal beside the delivery: the workflow ends once it is.
    await t.temporal.client.workflow.getHandle(`alert-${alert!.data.threatEventId}`).result();
    const events = threatEventListView.parse(
      (await request(t.app).get('/api/threat-events').set(as(who))).body,
    );
    expect(events.threat_events).toMatchObject([
      {
        threat_event_id: alert!.data.threatEventId,
        hit_count: 1,
        source: { ip: ATTACKER, via: 'api_key', user_agent: 'python-requests/2.31' },
        alert: { risk_score: alert!.data.riskScore, attacker: { ip: ATTACKER } },
      },
    ]);
    const log = threatLogView.parse(
      (await request(t.app).get('/api/threat-log').set(as(who))).body,
    );
    const [hit] = log.hits;
    const sealed = await request(t.app).get(`/api/verify/${hit!.evidence.content_hash}`);
    expect(sealed.body).toMatchObject({ exists: true, intact: true });
  });

  it('when a decoy database password is tried at login, then it fires too', async () => {
    const { who, path } = await account();
    const canary = await plant(who, 'database_url');
    const password = new URL(canary.value).password;
    const res = await request(t.app)
      .post('/api/auth/login')
      .send({ email: 'admin@example.com', password });
    expect(res.status).toBe(401);
    const [alert] = await alertsAt(path);
    expect(alert!.data.canaryId).toBe(canary.canary_id);
  });

  it('when a decoy cloud key signs a request, then it fires and the route answers as usual', async () => {
    const { who, path } = await account();
    const canary = await plant(who, 'aws_access_key');
    expect(canary.value).toMatch(/^AKIA[A-Z2-7]{16}$/);
    const res = await request(t.app)
      .get('/api/users/me')
      .set(
        'Authorization',
        `AWS4-HMAC-SHA256 Credential=${canary.value}/20261121/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00`,
      );
    expect(res.status).toBe(401);
    const [alert] = await alertsAt(path);
    expect(alert!.data.canaryId).toBe(canary.canary_id);
  });
});

describe('a URL tripwire', () => {
  it('when fetched, then the fetcher sees the same page as for any path, and an alert goes out', async () => {
    const { who, path } = await account();
    const canary = await plant(who, 'url');
    const url = new URL(canary.value);
    expect(url.origin).toBe('https://tripwire.example.com');
    const fired = await request(t.app).get(url.pathname).set('X-Forwarded-For', ATTACKER);
    const other = await request(t.app).get('/r/not-a-tripwire');
    expect(fired.status).toBe(200);
    expect(fired.text).toBe(other.text);
    const [alert] = await alertsAt(path);
    expect(alert!.data).toMatchObject({ canaryId: canary.canary_id, attacker: { ip: ATTACKER } });
  });
});

describe('a decoy email address', () => {
  const transport = () =>
    nodemailer.createTransport({ host: '127.0.0.1', port: mail.port, secure: false });

  it('when mail arrives for it, then the alert names the mail server and leaves attacker.ip empty', async () => {
    const { who, path } = await account();
    const canary = await plant(who, 'email');
    expect(canary.value).toMatch(/@decoys\.example\.com$/);
    await transport().sendMail({
      from: 'sender@example.org',
      to: canary.value,
      subject: 'Invoice',
      text: 'hello',
    });
    const [alert] = await alertsAt(path);
    expect(alert!.data).toMatchObject({
      canaryId: canary.canary_id,
      platform: 'email',
      attacker: { ip: '' },
      mailServer: { ip: '127.0.0.1' },
    });
    // The alert is kept on its event by the seal beside the delivery: the workflow ends once it is.
    await t.temporal.client.workflow.getHandle(`alert-${alert!.data.threatEventId}`).result();
    const events = threatEventListView.parse(
      (await request(t.app).get('/api/threat-events').set(as(who))).body,
    );
    expect(events.threat_events).toMatchObject([
      {
        source: {
          ip: '',
          via: 'email',
          mail_server: { ip: '127.0.0.1', mail_from: 'sender@example.org' },
        },
        alert: { mail_server: { ip: '127.0.0.1' } },
      },
    ]);
  });

  it('when mail is for an address nobody planted, then the listener refuses it', async () => {
    await expect(
      transport().sendMail({ from: 'a@example.org', to: 'nobody@decoys.example.com', text: 'x' }),
    ).rejects.toMatchObject({ responseCode: 550 });
  });
});

describe('retired canaries, storms and quotas', () => {
  it('when a canary is retired, then presenting it fires nothing', async () => {
    const { who, path } = await account();
    const canary = await plant(who, 'api_key');
    const retired = await request(t.app).delete(`/api/canaries/${canary.canary_id}`).set(as(who));
    expect(retired.body.retired_at).toEqual(expect.any(String));
    await request(t.app).get('/api/canaries').set('X-API-Key', canary.value).expect(401);
    await t.tripwires.flush();
    await new Promise((r) => setTimeout(r, 3_000));
    expect(receiver.hitsOn(path)).toEqual([]);
    expect((await request(t.app).get('/api/threat-log').set(as(who))).body.hits).toEqual([]);
  });

  it('when 100 hits come in a burst, then 100 sealed hits, an alert at once and at most one follow-up that counts them all', async () => {
    const { who, path } = await account();
    const canary = await plant(who, 'url');
    const { pathname } = new URL(canary.value);
    await Promise.all(
      Array.from({ length: 100 }, () =>
        request(t.app).get(pathname).set('X-Forwarded-For', ATTACKER).expect(200),
      ),
    );
    await t.tripwires.flush();
    const [event] = threatEventListView.parse(
      (await request(t.app).get('/api/threat-events').set(as(who))).body,
    ).threat_events;
    expect(event).toMatchObject({ hit_count: 100 });
    // The storm's workflows are done once it went quiet: every alert they sent has arrived then.
    const results = await stormResults(event!.threat_event_id);
    const alerts = await alertsAt(path, results.filter((r) => r.outcome === 'delivered').length);
    expect(alerts.length).toBeLessThanOrEqual(2);
    expect(alerts[0]!.data.summary).toBe('canary fired');
    // The first alert counts the hits that had joined when it was prepared; any that came later
    // are in one follow-up, which counts them all.
    expect(alerts.at(-1)!.data.interpretation).toContain('100 times');
    if (alerts.length === 2)
      expect(alerts[1]!.data.summary).toMatch(
        /^canary fired again: \d+ more hits? since the first alert$/,
      );

    const first = (await request(t.app).get('/api/threat-log?limit=60').set(as(who))).body;
    const second = (
      await request(t.app).get(`/api/threat-log?limit=60&cursor=${first.next_cursor}`).set(as(who))
    ).body;
    const ids = new Set([...first.hits, ...second.hits].map((h: { hit_id: string }) => h.hit_id));
    expect(ids.size).toBe(100);
    expect(second.next_cursor).toBeNull();
  }, 90_000);

  it('when a tripwire fires once, then its alert ends with its first round: no storm timer, and nothing follows', async () => {
    const { who, path } = await account();
    const canary = await plant(who, 'url');
    await request(t.app)
      .get(new URL(canary.value).pathname)
      .set('X-Forwarded-For', ATTACKER)
      .expect(200);
    const [alert] = await alertsAt(path);
    const [event] = threatEventListView.parse(
      (await request(t.app).get('/api/threat-events').set(as(who))).body,
    ).threat_events;
    expect(alert!.data).toMatchObject({
      summary: 'canary fired',
      threatEventId: event!.threat_event_id,
    });
    await t.tripwires.flush();
    const handle = t.temporal.client.workflow.getHandle<typeof alertWorkflow>(
      `alert-${event!.threat_event_id}`,
    );
    expect(sent(await stormResults(event!.threat_event_id))).toEqual([
      expect.objectContaining({ deliveryId: expect.stringMatching(/^alert-/) }),
    ]);
    expect(receiver.hitsOn(path)).toHaveLength(1);
    // One workflow task: the first attempts' local activity (a marker naming its activity type),
    // then the completion; no timer waited for a storm that nobody said had grown.
    const { events } = await handle.fetchHistory();
    const steps = events!.flatMap((e) => {
      const data = e.markerRecordedEventAttributes?.details?.data?.payloads?.[0]?.data;
      if (data) {
        const marker = JSON.parse(Buffer.from(data).toString()) as { activity_type?: string };
        return [marker.activity_type];
      }
      return e.timerStartedEventAttributes ? ['timer'] : [];
    });
    expect(steps).toEqual(['sendThreatAlert']);
    expect(events!.filter((e) => e.workflowTaskCompletedEventAttributes)).toHaveLength(1);
  }, 60_000);

  it('when its storm hits again once the alert has ended, then one follow-up reports the hit, and starting it again sends nothing more', async () => {
    const { who, path } = await account();
    const canary = await plant(who, 'url');
    const { pathname } = new URL(canary.value);
    const fire = () => request(t.app).get(pathname).set('X-Forwarded-For', ATTACKER).expect(200);
    await fire();
    await t.tripwires.flush();
    const [event] = threatEventListView.parse(
      (await request(t.app).get('/api/threat-events').set(as(who))).body,
    ).threat_events;
    const threatEventId = event!.threat_event_id;
    await t.temporal.client.workflow.getHandle(`alert-${threatEventId}`).result();

    await fire();
    await t.tripwires.flush();
    const [first, later] = await alertsAt(path, 2);
    expect(first!.data.summary).toBe('canary fired');
    expect(later!.data).toMatchObject({
      summary: 'canary fired again: 1 more hit since the first alert',
      threatEventId,
    });
    const results = sent(await stormResults(threatEventId));
    expect(results.map((r) => r.deliveryId.split(':')[0])).toEqual([
      `alert-${threatEventId}`,
      followUpIdOf(threatEventId),
    ]);
    // A third hit in the window, and the follow-up started again (another replica, the
    // reconciler): the event's one follow-up is made, and a finished workflow never runs again.
    await fire();
    await t.tripwires.flush();
    await startStormFollowUp(t.temporal, { accountId: who.userId, threatEventId, gather: GATHER });
    await new Promise((r) => setTimeout(r, 2_500));
    expect(receiver.hitsOn(path)).toHaveLength(2);
  }, 60_000);

  it('when the account has used up its plantings, then it still gets its alerts', async () => {
    const { who, path } = await account();
    const canary = await plant(who, 'api_key');
    for (let i = 1; i < 10; i++) await plant(who, 'url');
    const refused = await request(t.app).post('/api/canaries').set(as(who)).send({ kind: 'url' });
    expect(refused.status).toBe(402);
    expect(refused.body.detail).toMatchObject({ metric: 'canary_plants_per_month' });
    await request(t.app).get('/api/canaries').set('X-API-Key', canary.value).expect(401);
    expect(await alertsAt(path)).toHaveLength(1);
  });
});

describe('threat views', () => {
  it('when filtered by canary and time, then only the matching hits and events come back', async () => {
    const { who } = await account();
    const [a, b] = [await plant(who, 'url'), await plant(who, 'url')];
    for (const canary of [a, b]) await request(t.app).get(new URL(canary.value).pathname);
    await t.tripwires.flush();
    const get = async (path: string) =>
      (await request(t.app).get(path).set(as(who)).expect(200)).body as {
        hits?: { canary_id: string }[];
        threat_events?: { canary_id: string }[];
      };
    const onlyA = await get(`/api/threat-log?canary_id=${a.canary_id}`);
    expect(onlyA.hits!.map((h) => h.canary_id)).toEqual([a.canary_id]);
    const eventsB = await get(`/api/threat-events?canary_id=${b.canary_id}`);
    expect(eventsB.threat_events!.map((e) => e.canary_id)).toEqual([b.canary_id]);
    expect((await get('/api/threat-log?since=2999-01-01T00:00:00Z')).hits).toEqual([]);
    expect((await get('/api/threat-events?until=2000-01-01T00:00:00Z')).threat_events).toEqual([]);
    expect((await get('/api/threat-log?since=2000-01-01T00:00:00Z')).hits).toHaveLength(2);
  });

  it('when one threat event is asked for, then its owner gets it; another account 403, an unknown id 404, a key needs threats:read', async () => {
    const { who } = await account();
    const canary = await plant(who, 'url');
    await request(t.app).get(new URL(canary.value).pathname);
    await t.tripwires.flush();
    const [listed] = (await request(t.app).get('/api/threat-events').set(as(who))).body
      .threat_events as { threat_event_id: string; canary_id: string }[];
    const path = `/api/threat-events/${listed!.threat_event_id}`;
    const one = await request(t.app).get(path).set(as(who)).expect(200);
    // The alert may be prepared between the two reads, so compare what cannot change.
    expect(one.body).toMatchObject({
      threat_event_id: listed!.threat_event_id,
      canary_id: canary.canary_id,
      hit_count: 1,
    });
    const other = await signUpAndLogIn(t.app);
    const refused = await request(t.app).get(path).set(as(other));
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('belongs to another account');
    const missing = await request(t.app).get('/api/threat-events/thr_missing').set(as(who));
    expect(missing.status).toBe(404);
    const canariesOnly = await createKey(t.app, who.token, { scopes: ['canaries:read'] });
    await request(t.app).get(path).set('X-API-Key', canariesOnly.key).expect(403);
    const threats = await createKey(t.app, who.token, { scopes: ['threats:read'] });
    await request(t.app).get(path).set('X-API-Key', threats.key).expect(200);
  });
});

describe("a threat event's deliveries", () => {
  it('when asked for, then every channel the alert went to is listed with its attempts; another account gets 404, a key needs threats:read', async () => {
    const { who, path } = await account();
    const canary = await plant(who, 'url');
    await request(t.app).get(new URL(canary.value).pathname);
    const [alert] = await alertsAt(path);
    const id = alert!.data.threatEventId!;
    await t.temporal.client.workflow.getHandle(`alert-${id}`).result();
    const [hook] = (await request(t.app).get('/api/alert-channels').set(as(who))).body.channels as {
      id: string;
    }[];

    const url = `/api/threat-events/${id}/deliveries`;
    const { body } = await request(t.app).get(url).set(as(who)).expect(200);
    const { deliveries } = threatDeliveriesView.parse(body);
    const toHook = deliveries.filter((d) => d.channelId === hook!.id);
    expect(toHook).toHaveLength(1);
    expect(toHook[0]).toMatchObject({
      threatEventId: id,
      event: 'canary.tripwire_triggered',
      outcome: 'delivered',
      status: 200,
      attempts: [expect.objectContaining({ attempt: 1, status: 200 })],
    });
    // The built-in email channel is listed too, whatever became of it.
    expect(deliveries.map((d) => d.channelId)).toContain('builtin:email');
    expect(deliveries.every((d) => d.threatEventId === id)).toBe(true);

    const other = await signUpAndLogIn(t.app);
    const refused = await request(t.app).get(url).set(as(other));
    const unknown = await request(t.app)
      .get('/api/threat-events/thr_missing/deliveries')
      .set(as(other));
    expect(refused.status).toBe(404);
    expect(unknown.status).toBe(404);
    // Another account's event reads like an unknown one: its id says nothing more.
    expect(refused.body.detail).toBe(`No threat event ${id}`);
    const canariesOnly = await createKey(t.app, who.token, { scopes: ['canaries:read'] });
    const denied = await request(t.app).get(url).set('X-API-Key', canariesOnly.key);
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toContain('scope');
    const reader = await createKey(t.app, who.token, { scopes: ['threats:read'] });
    await request(t.app).get(url).set('X-API-Key', reader.key).expect(200);
  });
});

describe('/api/canaries access', () => {
  it('when another account asks for a canary, then 403; an unknown one 404', async () => {
    const { who } = await account();
    const other = await signUpAndLogIn(t.app);
    const canary = await plant(who, 'url');
    const res = await request(t.app).get(`/api/canaries/${canary.canary_id}`).set(as(other));
    expect(res.status).toBe(403);
    const gone = await request(t.app).get('/api/canaries/cnr_missing').set(as(who));
    expect(gone.status).toBe(404);
    const retire = await request(t.app).delete(`/api/canaries/${canary.canary_id}`).set(as(other));
    expect(retire.status).toBe(403);
  });

  it('when an API key lists canaries, then canaries:read is required', async () => {
    const who = await signUpAndLogIn(t.app);
    const reader = await createKey(t.app, who.token, { scopes: ['canaries:read'] });
    const other = await createKey(t.app, who.token, { scopes: ['threats:read'] });
    await request(t.app).get('/api/canaries').set('X-API-Key', reader.key).expect(200);
    await request(t.app).get('/api/canaries').set('X-API-Key', other.key).expect(403);
    await request(t.app).get('/api/threat-events').set('X-API-Key', other.key).expect(200);
    await request(t.app).get('/api/threat-events').set('X-API-Key', reader.key).expect(403);
  });

  it.each([
    [{ kind: 'honeypot' }, 'kind'],
    [{ kind: 'url', platform: '' }, 'platform'],
    [{ kind: 'url', color: 'red' }, 'color'],
  ])('when the body is %j, then 422 names %s and nothing is planted', async (body, field) => {
    const who = await signUpAndLogIn(t.app);
    const res = await request(t.app).post('/api/canaries').set(as(who)).send(body);
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain(field);
    expect((await request(t.app).get('/api/canaries').set(as(who))).body.canaries).toEqual([]);
  });

  it('when the threat views get a bad query, then 422 names the parameter', async () => {
    const who = await signUpAndLogIn(t.app);
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['since=yesterday', 'since'],
      ['cursor=nonsense', 'cursor'],
      // Found by the fuzz run: an inverted range reached the database, which answered an error.
      ['since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z', 'query.until: not before since'],
    ]) {
      const res = await request(t.app).get(`/api/threat-log?${query}`).set(as(who));
      expect(res.status).toBe(422);
      expect(res.body.detail).toContain(field);
    }
  });
});
