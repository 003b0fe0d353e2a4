import { ScheduleNotFoundError } from '@temporalio/client';
import request from 'supertest';
import { weeklyDigestPayloadSchema, type WeeklyDigestPayload } from '../../src/alerts/payload';
import { verifyWebhookSignature } from '../../src/alerts/webhook-signature';
import { WeeklySettingsRepository } from '../../src/weekly/weekly-settings.repository';
import { weeklyScheduleId } from '../../src/weekly/weekly-schedules';
import { searchAttributes, type AlertResult } from '../../workflows/shared';
import { freePort } from '../../tools/stack';
import { createKey, signUpAndLogIn, type SignedIn } from '../support/accounts';
import { startAlertStack } from '../support/alert-stack';
import type { Receiver } from '../support/receiver';
import { createTestApp, type TestApp } from '../support/test-app';

const DAY_MS = 86_400_000;
const SECRET = 'weekly-digest-test-secret';

let t: TestApp;
let receiver: Receiver;
let stop: () => Promise<void>;

beforeAll(async () => {
  ({ t, receiver, stop } = await startAlertStack());
}, 120_000);
afterAll(() => stop());

const as = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });
const getWeekly = (who: SignedIn) => request(t.app).get('/api/weekly').set(as(who));
const putWeekly = (who: SignedIn, body: object) =>
  request(t.app).put('/api/weekly').set(as(who)).send(body);
const sendNow = (who: SignedIn) => request(t.app).post('/api/weekly/send-now').set(as(who));
const describeSchedule = (who: SignedIn) =>
  t.temporal.client.schedule.getHandle(weeklyScheduleId(who.userId)).describe();

/** A generic webhook channel to its own path on the receiver, taking only channel tests. */
async function webhook(who: SignedIn, path: string): Promise<string> {
  const res = await request(t.app)
    .post('/api/alert-channels')
    .set(as(who))
    .send({
      kind: 'webhook',
      name: `hook ${path}`,
      url: receiver.url(path),
      secret: SECRET,
      // Alerts of the canaries fired below go nowhere; a digest goes to its chosen channels.
      events: ['canary.test_alert'],
    });
  if (res.status !== 201) throw new Error(`channel: ${res.status} ${res.text}`);
  return res.body.id as string;
}

/** The digests at a path, each with its signature verified. */
async function digestsAt(path: string, count: number): Promise<WeeklyDigestPayload[]> {
  const hits = await receiver.waitFor(path, count, 60_000);
  return hits.map((hit) => {
    expect(hit.headers['x-service-event']).toBe('account.weekly_digest');
    const check = verifyWebhookSignature(SECRET, {
      rawBody: hit.rawBody,
      timestamp: hit.headers['x-service-timestamp'] as string,
      signature: hit.headers['x-service-signature'] as string,
    });
    expect(check.ok).toBe(true);
    return weeklyDigestPayloadSchema.parse(JSON.parse(hit.rawBody.toString()));
  });
}

async function digestRunEnds(workflowId: string): Promise<AlertResult> {
  return (await t.temporal.client.workflow.getHandle(workflowId).result()) as AlertResult;
}

const settings = (channels: string[], extra: object = {}) => ({
  enabled: true,
  weekday: 'friday',
  hour: 17,
  time_zone: 'Asia/Tokyo',
  channels,
  ...extra,
});

describe('PUT /api/weekly', () => {
  it("creates the account's Schedule with its day, hour and time zone, and updates it in place", async () => {
    const alice = await signUpAndLogIn(t.app);
    expect((await getWeekly(alice)).body).toEqual({
      enabled: false,
      weekday: 'monday',
      hour: 9,
      time_zone: 'UTC',
      channels: [],
      schedule_synced: true,
    });
    const channel = await webhook(alice, `/digest/${alice.userId}`);
    const put = await putWeekly(alice, settings([channel, 'builtin:email']));
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ ...settings([channel, 'builtin:email']), schedule_synced: true });
    expect((await getWeekly(alice)).body).toEqual(put.body);

    const made = await describeSchedule(alice);
    expect(made.spec.timezone).toBe('Asia/Tokyo');
    expect(made.spec.calendars).toEqual([
      expect.objectContaining({
        dayOfWeek: [{ start: 'FRIDAY', end: 'FRIDAY', step: 1 }],
        hour: [{ start: 17, end: 17, step: 1 }],
        minute: [{ start: 0, end: 0, step: 1 }],
      }),
    ]);
    expect(made.state.paused).toBe(false);
    expect(made.action).toEqual(
      expect.objectContaining({
        type: 'startWorkflow',
        workflowType: 'weeklyDigestWorkflow',
        taskQueue: t.config.TEMPORAL_TASK_QUEUE,
        args: [{ accountId: alice.userId, scheduled: true }],
      }),
    );
    expect(made.typedSearchAttributes.get(searchAttributes.accountId)).toBe(alice.userId);
    // Temporal computes the next run from the spec: a Friday, 17:00 in Tokyo (08:00 UTC).
    const next = made.info.nextActionTimes[0]!;
    expect(next.getUTCDay()).toBe(5);
    expect(next.getUTCHours()).toBe(8);

    // The same PUT again changes nothing; another hour updates the same schedule.
    expect((await putWeekly(alice, settings([channel]))).status).toBe(200);
    const moved = await putWeekly(alice, settings([channel], { hour: 6, weekday: 'sunday' }));
    expect(moved.status).toBe(200);
    const updated = await describeSchedule(alice);
    expect(updated.spec.calendars?.[0]).toEqual(
      expect.objectContaining({
        dayOfWeek: [{ start: 'SUNDAY', end: 'SUNDAY', step: 1 }],
        hour: [{ start: 6, end: 6, step: 1 }],
      }),
    );
    expect(updated.state.paused).toBe(false);
  });

  it('pauses the schedule when turned off, and resumes it when turned on', async () => {
    const who = await signUpAndLogIn(t.app);
    const channel = await webhook(who, `/digest/${who.userId}`);
    // Off from the start: no schedule is made at all.
    expect((await putWeekly(who, settings([channel], { enabled: false }))).status).toBe(200);
    await expect(describeSchedule(who)).rejects.toBeInstanceOf(ScheduleNotFoundError);

    expect((await putWeekly(who, settings([channel]))).status).toBe(200);
    expect((await describeSchedule(who)).state.paused).toBe(false);
    const off = await putWeekly(who, settings([channel], { enabled: false }));
    expect(off.body).toEqual(expect.objectContaining({ enabled: false, schedule_synced: true }));
    const paused = await describeSchedule(who);
    expect(paused.state.paused).toBe(true);
    expect(paused.state.note).toMatch(/turned off/);
    expect((await putWeekly(who, settings([channel]))).status).toBe(200);
    expect((await describeSchedule(who)).state.paused).toBe(false);
  });

  it('settings written by an API that died before its schedule call are scheduled by the reconciler', async () => {
    const who = await signUpAndLogIn(t.app);
    const channel = await webhook(who, `/digest/${who.userId}`);
    // What a PUT leaves when the process dies between its write and its schedule call.
    const repository = new WeeklySettingsRepository(t.mongo.db);
    await repository.save(
      who.userId,
      {
        enabled: true,
        weekday: 'tuesday',
        hour: 7,
        timeZone: 'America/New_York',
        channels: [channel],
      },
      new Date(Date.now() - 60_000),
    );
    expect((await getWeekly(who)).body.schedule_synced).toBe(false);
    await expect(describeSchedule(who)).rejects.toBeInstanceOf(ScheduleNotFoundError);

    const pass = await t.reconciler.reconcileOnce();
    expect(pass.schedules).toBeGreaterThanOrEqual(1);
    const made = await describeSchedule(who);
    expect(made.spec.timezone).toBe('America/New_York');
    expect(made.spec.calendars?.[0]).toEqual(
      expect.objectContaining({ dayOfWeek: [{ start: 'TUESDAY', end: 'TUESDAY', step: 1 }] }),
    );
    expect((await getWeekly(who)).body.schedule_synced).toBe(true);
    // Nothing left to do on the next pass for this account.
    expect(await repository.pendingSchedules(new Date(), 100)).toEqual([]);
  });
  it('when Temporal does not answer, then the settings are kept unsynced and the reconciler schedules them', async () => {
    // An API on the same database whose Temporal address answers nothing.
    const down = await createTestApp({
      config: { ...t.config, TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` },
    });
    try {
      const who = await signUpAndLogIn(down.app);
      const channel = await webhook(who, `/digest/${who.userId}`);
      const put = await request(down.app)
        .put('/api/weekly')
        .set(as(who))
        .send(settings([channel], { weekday: 'saturday' }));
      expect(put.status).toBe(200);
      expect(put.body.schedule_synced).toBe(false);
      await expect(describeSchedule(who)).rejects.toBeInstanceOf(ScheduleNotFoundError);

      // The test's own write: the reconciler's grace for requests still at work has passed.
      await t.mongo.db
        .collection('weekly_digests')
        .updateOne({ _id: who.userId as never }, { $set: { schedulePendingSince: new Date(0) } });
      await t.reconciler.reconcileOnce();
      expect((await describeSchedule(who)).spec.calendars?.[0]).toEqual(
        expect.objectContaining({ dayOfWeek: [{ start: 'SATURDAY', end: 'SATURDAY', step: 1 }] }),
      );
      expect((await getWeekly(who)).body.schedule_synced).toBe(true);
    } finally {
      await down.disconnect();
    }
  });
});

describe('POST /api/weekly/send-now', () => {
  it('delivers a digest with the week’s hits by canary and day, sources and delivery health', async () => {
    const who = await signUpAndLogIn(t.app);
    const plant = async (memo: string) => {
      const res = await request(t.app)
        .post('/api/canaries')
        .set(as(who))
        .send({ kind: 'url', memo });
      expect(res.status).toBe(201);
      return res.body as { canary_id: string; value: string };
    };
    const [a, b] = [await plant('build box .env'), await plant('wiki page')];
    const fire = (canary: { value: string }) => request(t.app).get(new URL(canary.value).pathname);
    for (let i = 0; i < 3; i++) await fire(a);
    await fire(b);
    await t.tripwires.flush();

    // The test's own writes: a's hits placed around a Tokyo midnight, one more outside the week.
    const dayStart = Math.floor(Date.now() / DAY_MS) * DAY_MS - 2 * DAY_MS;
    const hits = t.mongo.db.collection('threat_hits');
    const aHits = await hits.find({ accountId: who.userId, canaryId: a.canary_id }).toArray();
    expect(aHits).toHaveLength(3);
    // 23:00 UTC the day before is 08:00 in Tokyo; 20:00 UTC is 05:00 of Tokyo's next day.
    const times = [dayStart - 3_600_000, dayStart + 3_600_000, dayStart + 20 * 3_600_000];
    for (const [i, hit] of aHits.entries()) {
      await hits.updateOne({ _id: hit._id }, { $set: { at: new Date(times[i]!) } });
    }
    await hits.insertOne({
      ...aHits[0]!,
      _id: `${String(aHits[0]!._id)}-old`,
      at: new Date(Date.now() - 8 * DAY_MS),
    } as never);
    const tokyoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

    const good = await webhook(who, `/digest/${who.userId}`);
    const broken = await webhook(who, '/status/500');
    expect((await putWeekly(who, settings([good, broken], { enabled: false }))).status).toBe(200);

    const first = await sendNow(who);
    expect(first.status).toBe(202);
    expect(first.body.workflow_id).toBe(`weekly-digest-${who.userId}-now`);
    const firstRun = await digestRunEnds(first.body.workflow_id as string);
    expect(firstRun.results).toEqual([
      expect.objectContaining({ channelId: good, outcome: 'delivered', status: 200 }),
      expect.objectContaining({ channelId: broken, outcome: 'failed', status: 500 }),
    ]);
    const [digest] = await digestsAt(`/digest/${who.userId}`, 1);
    expect(digest!.data).toEqual(
      expect.objectContaining({
        accountId: who.userId,
        timeZone: 'Asia/Tokyo',
        totalHits: 4,
        canaries: [
          {
            canaryId: a.canary_id,
            kind: 'url',
            memo: 'build box .env',
            hits: 3,
            byDay: [
              { key: tokyoDay(dayStart), count: 2 },
              { key: tokyoDay(dayStart + DAY_MS), count: 1 },
            ],
          },
          {
            canaryId: b.canary_id,
            kind: 'url',
            memo: 'wiki page',
            hits: 1,
            byDay: [{ key: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), count: 1 }],
          },
        ],
        stillFailing: [],
        threatEventId: null,
      }),
    );
    const sources = digest!.data.sourcesByCountry.reduce((sum, s) => sum + s.count, 0);
    expect(sources).toBe(2);

    // The failed delivery shows in the next digest, as does the first one's outcome.
    const second = await sendNow(who);
    expect(second.status).toBe(202);
    await digestRunEnds(second.body.workflow_id as string);
    const [, next] = await digestsAt(`/digest/${who.userId}`, 2);
    expect(next!.data.stillFailing).toEqual([
      expect.objectContaining({
        channelId: broken,
        kind: 'webhook',
        failedThisWeek: 1,
        lastError: expect.stringContaining('500'),
      }),
    ]);
    expect(next!.data.deliveriesByOutcome).toEqual(
      expect.arrayContaining([
        { key: 'delivered', count: 1 },
        { key: 'failed', count: 1 },
      ]),
    );

    // Each digest delivery is in the channel's list, with its three attempts where it failed.
    const listed = await request(t.app)
      .get(`/api/alert-channels/${broken}/deliveries`)
      .set(as(who));
    expect(listed.body.deliveries).toHaveLength(2);
    for (const delivery of listed.body.deliveries) {
      expect(delivery).toEqual(
        expect.objectContaining({ event: 'account.weekly_digest', outcome: 'failed' }),
      );
      expect(delivery.attempts).toHaveLength(3);
    }

    // The runs are the tenant's own in /api/workflow-runs (visibility is eventually consistent).
    const deadline = Date.now() + 30_000;
    let runs: { workflow_type: string }[] = [];
    while (Date.now() < deadline) {
      const res = await request(t.app)
        .get('/api/workflow-runs?event=account.weekly_digest')
        .set(as(who));
      runs = res.body.workflow_runs ?? [];
      if (runs.filter((r) => r.workflow_type === 'weeklyDigestWorkflow').length >= 2) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(runs.filter((r) => r.workflow_type === 'weeklyDigestWorkflow')).toHaveLength(2);
    expect(runs.filter((r) => r.workflow_type === 'alertWorkflow')).toHaveLength(2);
  }, 120_000);

  it("the Schedule's own runs send the digest, and send nothing once it is turned off", async () => {
    const who = await signUpAndLogIn(t.app);
    const channel = await webhook(who, `/scheduled/${who.userId}`);
    expect((await putWeekly(who, settings([channel]))).status).toBe(200);
    const schedule = t.temporal.client.schedule.getHandle(weeklyScheduleId(who.userId));
    /** Fires the schedule as its time would, and waits for that run's end. */
    const fire = async (): Promise<AlertResult> => {
      const before = (await schedule.describe()).info.recentActions.length;
      await schedule.trigger();
      const deadline = Date.now() + 30_000;
      for (;;) {
        const { recentActions } = (await schedule.describe()).info;
        const started = recentActions[before];
        if (started) {
          const { workflowId } = started.action.workflow;
          // Tagged for the tenant, so /api/workflow-runs lists it for this account alone.
          const run = await t.temporal.client.workflow.getHandle(workflowId).describe();
          expect(run.typedSearchAttributes.get(searchAttributes.accountId)).toBe(who.userId);
          return digestRunEnds(workflowId);
        }
        if (Date.now() > deadline) throw new Error('the schedule started no run');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    expect((await fire()).results).toEqual([
      expect.objectContaining({ channelId: channel, outcome: 'delivered' }),
    ]);
    const [digest] = await digestsAt(`/scheduled/${who.userId}`, 1);
    expect(digest!.data.accountId).toBe(who.userId);

    // Turned off: a run that still starts (here, triggered by hand) sends nothing.
    expect((await putWeekly(who, settings([channel], { enabled: false }))).status).toBe(200);
    expect((await fire()).results).toEqual([]);
    expect(receiver.hits.filter((hit) => hit.path === `/scheduled/${who.userId}`)).toHaveLength(1);
  });

  it('is refused while no channel is chosen', async () => {
    const who = await signUpAndLogIn(t.app);
    const res = await sendNow(who);
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/No channel is chosen/);
  });
});

describe('tenants and refusals', () => {
  it("another tenant can neither see nor use an account's settings or channels", async () => {
    const [alice, bob] = [await signUpAndLogIn(t.app), await signUpAndLogIn(t.app)];
    const channel = await webhook(alice, `/digest/${alice.userId}`);
    expect((await putWeekly(alice, settings([channel]))).status).toBe(200);

    expect((await getWeekly(bob)).body).toEqual(
      expect.objectContaining({ enabled: false, channels: [] }),
    );
    const stolen = await putWeekly(bob, settings([channel]));
    expect(stolen.status).toBe(422);
    expect(stolen.body.detail).toBe(
      `body.channels[0]: no alert channel ${channel} in this account`,
    );
    await expect(describeSchedule(bob)).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect((await sendNow(bob)).status).toBe(409);
    // Alice's schedule is as she left it.
    expect((await describeSchedule(alice)).spec.calendars?.[0]).toEqual(
      expect.objectContaining({ dayOfWeek: [{ start: 'FRIDAY', end: 'FRIDAY', step: 1 }] }),
    );
  });

  it('answers bad input with 422 naming the field, and changes nothing', async () => {
    const who = await signUpAndLogIn(t.app);
    const channel = await webhook(who, `/digest/${who.userId}`);
    expect((await putWeekly(who, settings([channel]))).status).toBe(200);
    const before = await describeSchedule(who);
    const cases: [object, RegExp][] = [
      [{ weekday: 'funday' }, /^body\.weekday/],
      [{ hour: 24 }, /^body\.hour/],
      [{ hour: 7.5 }, /^body\.hour/],
      [{ time_zone: 'Mars/Olympus_Mons' }, /^body\.time_zone: an IANA time zone name/],
      [{ time_zone: '+01:00' }, /^body\.time_zone: an IANA time zone name/],
      [{ channels: [] }, /^body\.channels: at least one channel/],
      [{ channels: [channel, channel] }, /^body\.channels: a channel is listed twice/],
      [{ channels: ['ch_nope'] }, /^body\.channels\[0\]: no alert channel ch_nope/],
      [{ surprise: true }, /^body/],
    ];
    for (const [change, detail] of cases) {
      const res = await putWeekly(who, settings([channel], { hour: 3, ...change }));
      expect([res.status, res.body.detail]).toEqual([422, expect.stringMatching(detail)]);
    }
    const missing = await putWeekly(who, { enabled: true });
    expect(missing.status).toBe(422);
    expect((await getWeekly(who)).body).toEqual(
      expect.objectContaining({ hour: 17, weekday: 'friday', time_zone: 'Asia/Tokyo' }),
    );
    expect((await describeSchedule(who)).spec).toEqual(before.spec);
  });

  it('takes a session or an API key with threats:read for reads and writes alike', async () => {
    const who = await signUpAndLogIn(t.app);
    const channel = await webhook(who, `/digest/${who.userId}`);
    const reader = await createKey(t.app, who.token, { scopes: ['threats:read'] });
    const other = await createKey(t.app, who.token, { scopes: ['canaries:read', 'threats:write'] });

    const viaKey = await request(t.app)
      .put('/api/weekly')
      .set('X-API-Key', reader.key)
      .send(settings([channel]));
    expect(viaKey.status).toBe(200);
    expect((await request(t.app).get('/api/weekly').set('X-API-Key', reader.key)).status).toBe(200);

    for (const call of [
      request(t.app).get('/api/weekly'),
      request(t.app)
        .put('/api/weekly')
        .send(settings([channel])),
      request(t.app).post('/api/weekly/send-now'),
    ]) {
      const res = await call.set('X-API-Key', other.key);
      expect(res.status).toBe(403);
      expect(res.body.detail).toBe('The API key does not have the required scope: threats:read');
    }
    expect((await request(t.app).get('/api/weekly')).status).toBe(401);
    expect(
      (
        await request(t.app)
          .put('/api/weekly')
          .send(settings([channel]))
      ).status,
    ).toBe(401);
    expect((await request(t.app).post('/api/weekly/send-now')).status).toBe(401);
  });
});
