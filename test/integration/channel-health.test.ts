import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { AlertOutcomes } from '../../src/alerts/alert-outcomes';
import { startAlert, startNotice } from '../../src/alerts/alert-workflows';
import { channelListView, channelView } from '../../src/alerts/channels.routes';
import {
  ChannelsRepository,
  LAST_DELIVERY_RESOLUTION_MS,
} from '../../src/alerts/channels.repository';
import { DeliveriesRepository } from '../../src/alerts/deliveries.repository';
import { channelDisabledPayloadSchema } from '../../src/alerts/payload';
import { verifyWebhookSignature } from '../../src/alerts/webhook-signature';
import { EvidenceStore } from '../../src/evidence/evidence.store';
import { auditTrailView } from '../../src/evidence/trail/trail.routes';
import { alertResults, tripwirePayload } from '../support/alerts';
import { signUpAndLogIn, type SignedIn } from '../support/accounts';
import { startAlertStack } from '../support/alert-stack';
import { Receiver } from '../support/receiver';
import { SmtpListener } from '../support/smtp-listener';
import type { TestApp } from '../support/test-app';

let t: TestApp;
/** Where the failing channels point: broken (503) for the tests that need it. */
let down: Receiver;
/** A second live receiver: the account's other channel, which gets the notice. */
let live: Receiver;
/** The built-in email channel's server: the notice goes there too. */
let smtp: SmtpListener;
let stop: () => Promise<void>;

// A channel failing for 2 s with nothing delivered is disabled; alerts recover every second.
beforeAll(async () => {
  smtp = await SmtpListener.start();
  ({
    t,
    receiver: down,
    stop,
  } = await startAlertStack(
    { CHANNEL_DISABLE_AFTER: '2s', ALERT_RECOVERY_SCHEDULE: '1s,1s,1s,1s' },
    { smtpUrl: smtp.url },
  ));
  live = await Receiver.start();
});
afterAll(async () => {
  await live.stop();
  await stop();
  await smtp.stop();
});
afterEach(() => down.breakWith(null));

const SECRET = 'channel-health-secret';
const as = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function webhook(who: SignedIn, url: string) {
  const res = await request(t.app)
    .post('/api/alert-channels')
    .set(as(who))
    .send({ kind: 'webhook', name: url, url, secret: SECRET });
  if (res.status !== 201) throw new Error(`channel: ${res.status} ${res.text}`);
  return res.body.id as string;
}

const channel = async (who: SignedIn, id: string) =>
  channelView.parse((await request(t.app).get(`/api/alert-channels/${id}`).set(as(who))).body);

const disabledEntries = async (who: SignedIn) =>
  auditTrailView
    .parse((await request(t.app).get('/api/audit/trail').set(as(who))).body)
    .entries.filter((e) => e.action === 'channel.disabled');

/** A channel test through the real workflow; no recovery, its outcome answered. */
const channelTest = async (who: SignedIn, id: string) =>
  (await request(t.app).post(`/api/alert-channels/${id}/test`).set(as(who))).body as {
    outcome: string;
  };

const notices = (path: string) =>
  live.hitsOn(path).filter((h) => h.headers['x-service-event'] === 'channel.disabled');

async function until(done: () => boolean | Promise<boolean>, what: string, ms = 60_000) {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(200);
  }
}

describe('endpoint health: a channel that kept failing is disabled', () => {
  it('when deliveries to a channel failed for longer than CHANNEL_DISABLE_AFTER, then it is disabled with its reason, one audit entry and one notice on the other channel, and its recovery ends', async () => {
    const who = await signUpAndLogIn(t.app);
    const failing = await webhook(who, down.url('/down'));
    const other = await webhook(who, live.url('/other'));
    down.breakWith(503);
    const threatEventId = `thr_${randomUUID()}`;
    const handle = await startAlert(t.temporal, {
      accountId: who.userId,
      payload: tripwirePayload(threatEventId),
      threatEventId,
    });

    // The first round fails (the clock starts); a recovery round 2 s later disables the channel.
    await until(async () => (await channel(who, failing)).disabled, 'the channel disabled');
    const shown = await channel(who, failing);
    expect(shown.disabledReason).toBe(
      'its deliveries kept failing for longer than 2s with nothing delivered (CHANNEL_DISABLE_AFTER)',
    );
    expect(Date.parse(shown.disabledAt!) - Date.parse(shown.failingSince!)).toBeGreaterThanOrEqual(
      2_000,
    );
    expect(shown.lastError).toMatchObject({ status: 503 });
    const listed = channelListView.parse(
      (await request(t.app).get('/api/alert-channels').set(as(who))).body,
    ).channels;
    expect(listed.find((c) => c.id === failing)).toMatchObject({
      disabled: true,
      disabledReason: shown.disabledReason,
      disabledAt: shown.disabledAt,
    });
    expect(listed.find((c) => c.id === other)).toMatchObject({ disabled: false });

    // The alert ends once its recovery finds the channel disabled: partly failed, not red.
    const { results } = await alertResults(handle);
    expect(results.find((r) => r.channelId === failing)).toMatchObject({ outcome: 'failed' });
    expect(results.find((r) => r.channelId === other)).toMatchObject({ outcome: 'delivered' });
    const hitsWhenDisabled = down.hitsOn('/down').length;

    // The notice, signed like every delivery, on the other channel; exactly once.
    const [notice] = await live.waitFor('/other', 2).then(() => notices('/other'));
    expect(notice).toBeDefined();
    const body = notice!.rawBody.toString();
    expect(
      verifyWebhookSignature(SECRET, {
        rawBody: body,
        timestamp: notice!.headers['x-service-timestamp'] as string,
        signature: notice!.headers['x-service-signature'] as string,
      }),
    ).toMatchObject({ ok: true });
    const payload = channelDisabledPayloadSchema.parse(JSON.parse(body));
    expect(payload.data).toMatchObject({
      channelId: failing,
      channelKind: 'webhook',
      reason: shown.disabledReason,
      disabledAt: shown.disabledAt,
      lastError: { status: 503 },
    });
    const [entry, ...more] = await disabledEntries(who);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      channel_id: failing,
      reason: shown.disabledReason,
      failing_since: shown.failingSince,
      error: 'HTTP 503',
    });
    expect(entry!.content_hash).toBeTruthy();

    // And by email to the account's address, the built-in channel being configured.
    await until(
      () =>
        smtp.received.some(
          (m) =>
            m.to.includes(who.email) &&
            m.mail.headers.get('x-service-event') === 'channel.disabled',
        ),
      'the notice by email',
    );
    const mail = smtp.received.find(
      (m) =>
        m.to.includes(who.email) && m.mail.headers.get('x-service-event') === 'channel.disabled',
    )!.mail;
    expect(mail.subject).toBe(`🟠 Alert channel disabled: webhook "${down.url('/down')}"`);
    expect(mail.text).toContain(shown.disabledReason!);

    await sleep(2_500);
    expect(notices('/other')).toHaveLength(1);
    expect(down.hitsOn('/down')).toHaveLength(hitsWhenDisabled);
  });

  it('when a disabled channel is enabled again, then its reason is cleared and its clock restarts', async () => {
    const who = await signUpAndLogIn(t.app);
    const id = await webhook(who, down.url('/reenabled'));
    down.breakWith(503);
    expect(await channelTest(who, id)).toMatchObject({ outcome: 'failed' });
    await sleep(2_100);
    expect(await channelTest(who, id)).toMatchObject({ outcome: 'failed' });
    expect(await channel(who, id)).toMatchObject({ disabled: true });

    const res = await request(t.app)
      .patch(`/api/alert-channels/${id}`)
      .set(as(who))
      .send({ disabled: false });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      disabled: false,
      disabledReason: null,
      disabledAt: null,
      failingSince: null,
    });
    // Still failing, but the clock started again: one failure now does not disable it.
    const enabledAt = Date.now();
    expect(await channelTest(who, id)).toMatchObject({ outcome: 'failed' });
    const after = await channel(who, id);
    expect(after).toMatchObject({ disabled: false, disabledReason: null });
    expect(Date.parse(after.failingSince!)).toBeGreaterThanOrEqual(enabledAt - 1_000);
    expect(await disabledEntries(who)).toHaveLength(1);
  });

  it('when a channel delivered since its failures began, then a failure after that does not disable it', async () => {
    const who = await signUpAndLogIn(t.app);
    const id = await webhook(who, down.url('/flaky'));
    down.breakWith(503);
    expect(await channelTest(who, id)).toMatchObject({ outcome: 'failed' });
    await sleep(2_100);
    down.breakWith(null);
    expect(await channelTest(who, id)).toMatchObject({ outcome: 'delivered' });
    expect(await channel(who, id)).toMatchObject({ failingSince: null, lastError: null });
    down.breakWith(503);
    expect(await channelTest(who, id)).toMatchObject({ outcome: 'failed' });
    expect(await channel(who, id)).toMatchObject({ disabled: false, disabledReason: null });
    expect(await disabledEntries(who)).toEqual([]);
  });

  it('when two workers record failures of an old failing channel at once, then it is disabled once, sealed once and announced once; a record run again repeats nothing', async () => {
    const who = await signUpAndLogIn(t.app);
    const id = await webhook(who, down.url('/raced'));
    await webhook(who, live.url('/raced-other'));
    // Each worker has its own repositories and evidence store, on the one database.
    const worker = () =>
      new AlertOutcomes(
        new DeliveriesRepository(t.mongo.db),
        new ChannelsRepository(t.mongo.db),
        new EvidenceStore(t.mongo.db, () => new Date()),
        { disableAfterMs: 2_000, notify: (notice) => startNotice(t.temporal, notice) },
      );
    const failure = async (outcomes: AlertOutcomes, deliveryId: string) => {
      const threatEventId = `thr_${randomUUID()}`;
      await outcomes.record(
        {
          accountId: who.userId,
          workflowId: `alert-${threatEventId}`,
          event: 'canary.tripwire_triggered',
          threatEventId,
          payload: tripwirePayload(threatEventId),
          resendOf: null,
        },
        [
          {
            channelId: id,
            kind: 'webhook',
            deliveryId,
            outcome: 'failed',
            status: 503,
            error: 'HTTP 503',
          },
        ],
        {},
      );
    };
    await failure(worker(), `first-${randomUUID()}`);
    await sleep(2_100);
    const workers = [worker(), worker(), worker(), worker()];
    const ids = workers.map(() => `raced-${randomUUID()}`);
    await Promise.all(workers.map((w, i) => failure(w, ids[i]!)));
    // Every record again, as after a lost answer: nothing new.
    await Promise.all(workers.map((w, i) => failure(w, ids[i]!)));

    expect(await channel(who, id)).toMatchObject({ disabled: true });
    const entries = await disabledEntries(who);
    expect(entries).toHaveLength(1);
    expect(ids).toContain(entries[0]!.delivery_id);
    await live.waitFor('/raced-other', 1);
    await sleep(2_000);
    expect(notices('/raced-other')).toHaveLength(1);
  });

  it('when eight workers try to disable one failing channel in the same instant, then exactly one does', async () => {
    const who = await signUpAndLogIn(t.app);
    const id = await webhook(who, down.url('/same-instant'));
    await new ChannelsRepository(t.mongo.db).recordOutcomes(
      [{ channelId: id, error: { message: 'HTTP 503', status: 503, at: new Date() } }],
      new Date(Date.now() - 10_000),
    );
    // Each worker its own repository; every write is sent before any answer comes back.
    const won = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        new ChannelsRepository(t.mongo.db).disableFailing(
          id,
          new Date(Date.now() - 2_000),
          'failing',
          `worker-${i}`,
          new Date(),
        ),
      ),
    );
    const winners = won.filter((w) => w !== null);
    expect(winners).toHaveLength(1);
    expect(await channel(who, id)).toMatchObject({ disabled: true, disabledReason: 'failing' });
    // The winner's record run again finds its own disable; a loser's finds nothing.
    const by = winners[0]!.disabledBy;
    const repo = new ChannelsRepository(t.mongo.db);
    expect(await repo.disableFailing(id, new Date(), 'failing', by, new Date())).toMatchObject({
      disabledBy: by,
    });
    const loser = by === 'worker-0' ? 'worker-1' : 'worker-0';
    expect(await repo.disableFailing(id, new Date(), 'failing', loser, new Date())).toBeNull();
  });

  it('when the channel fields are set by hand or wrongly, then the PATCH is refused naming them and nothing changes', async () => {
    const who = await signUpAndLogIn(t.app);
    const id = await webhook(who, down.url('/refused'));
    const before = await channel(who, id);
    for (const [body, named] of [
      [{ disabledReason: 'because' }, 'disabledReason'],
      [{ disabledAt: new Date().toISOString() }, 'disabledAt'],
      [{ failingSince: null }, 'failingSince'],
      [{ disabled: 'no' }, 'disabled'],
    ] as const) {
      const res = await request(t.app).patch(`/api/alert-channels/${id}`).set(as(who)).send(body);
      expect(res.status).toBe(422);
      expect(res.body.detail).toContain(named);
    }
    const stranger = await signUpAndLogIn(t.app);
    const foreign = await request(t.app)
      .patch(`/api/alert-channels/${id}`)
      .set(as(stranger))
      .send({ disabled: false });
    expect(foreign.status).toBe(403);
    expect(await channel(who, id)).toEqual(before);
  });
});

describe("a channel's lastDeliveryAt, kept to the minute", () => {
  const delivered = async (who: SignedIn, id: string) => {
    expect(await channelTest(who, id)).toMatchObject({ outcome: 'delivered' });
    return channel(who, id);
  };

  it('when a healthy channel delivers again within the minute, then its record is left as it was; a failure, and the success after it, are written at once', async () => {
    const who = await signUpAndLogIn(t.app);
    const id = await webhook(who, down.url('/busy'));
    const first = await delivered(who, id);
    expect(first.lastDeliveryAt).not.toBeNull();
    await sleep(1_100);
    expect(await delivered(who, id)).toEqual(first);

    down.breakWith(503);
    expect(await channelTest(who, id)).toMatchObject({ outcome: 'failed' });
    const failing = await channel(who, id);
    expect(failing).toMatchObject({
      lastError: { status: 503 },
      lastDeliveryAt: first.lastDeliveryAt,
    });
    expect(failing.failingSince).not.toBeNull();

    down.breakWith(null);
    const mended = await delivered(who, id);
    expect(mended).toMatchObject({ lastError: null, failingSince: null });
    expect(Date.parse(mended.lastDeliveryAt!)).toBeGreaterThan(Date.parse(first.lastDeliveryAt!));
  });

  it('when the channel as read last delivered a minute or more before, then a success refreshes lastDeliveryAt; under a minute, it does not', async () => {
    const who = await signUpAndLogIn(t.app);
    const id = await webhook(who, down.url('/resolution'));
    const channels = new ChannelsRepository(t.mongo.db);
    const read = async () => (await channels.find(who.userId, id))!;
    const at = new Date();
    // As if read healthy, having last delivered at `lastDeliveryAt`.
    const recorded = async (lastDeliveryAt: Date) => {
      const asRead = { ...(await read()), lastError: null, failingSince: null, lastDeliveryAt };
      await channels.recordOutcomes([{ channelId: id, error: null, read: asRead }], at);
      return (await read()).lastDeliveryAt;
    };
    expect(await read()).toMatchObject({ lastDeliveryAt: null });
    expect(await recorded(new Date(at.getTime() - LAST_DELIVERY_RESOLUTION_MS + 1_000))).toBeNull();
    expect(await recorded(new Date(at.getTime() - LAST_DELIVERY_RESOLUTION_MS))).toEqual(at);
  });
});
