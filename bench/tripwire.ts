/**
 * Tripwires end to end, in interleaved rounds with the CPU per operation of every process (API,
 * worker, Temporal, database; bench/support/rounds.ts):
 * - a URL tripwire fetched over HTTP → the signed webhook at a local HTTPS receiver (the first hit
 *   of a storm is alerted at once), against a ready alert started on the same stack and delivered
 *   to the same channel (the baseline of the ratio);
 * - floods of hits on live tripwires (new ones each round: ten from 5 sources each, 50 storms; and
 *   one from one source, one storm), against the same route answering unknown tokens (no hit to
 *   record); then every live hit must be recorded, and each storm's alert workflow must have
 *   started soon after its first hit (p99 reported).
 * The API runs in its own process (as deployed: this one is the client and the receiver); a real
 * worker process delivers. A warm-up leaves every process's code compiled, and each run ends once
 * the database is back at rest (bench/support/warm-up.ts).
 *
 *   npm run bench:tripwire -- [--alerts 20] [--hits 2000] [--concurrency 10] [--gather-ms 2000]
 *     [--min-rounds 5] [--max-rounds 15]
 *
 * `--alerts` and `--hits` are per round. `BENCH_WORKER_NODE_FLAGS` and `BENCH_API_NODE_FLAGS` pass
 * flags to the worker and the API (`--cpu-prof --cpu-prof-dir=…` profiles them).
 */
import { parseArgs } from 'node:util';
import { startAlert } from '../src/alerts/alert-workflows';
import { verifyWebhookSignature } from '../src/alerts/webhook-signature';
import { tripwirePayload } from '../test/support/alerts';
import { followUpIdOf } from '../workflows/shared';
import type { Hit } from '../test/support/receiver';
import { pct, pool } from './support/latency';
import { interleave, printComparison, roundOptions } from './support/rounds';
import { databaseSettler, warmUp } from './support/warm-up';
import { startWorkerStack } from './support/worker-stack';
import { startApiOnStack } from './support/api-process';

const { values } = parseArgs({
  strict: false,
  options: {
    alerts: { type: 'string', default: '20' },
    hits: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '10' },
    'gather-ms': { type: 'string', default: '2000' },
  },
});
const ALERTS = Number(values.alerts);
const HITS = Number(values.hits);
const CONCURRENCY = Number(values.concurrency);
const SECRET = 'benchmark-webhook-secret';
/** How long a run waits for its alerts to end before it reports them and goes on. */
const SETTLE_MS = 60_000;

async function main(): Promise<void> {
  const stack = await startWorkerStack('tripwire', {
    ALERT_GATHER_MS: String(values['gather-ms']),
    TRUST_PROXY: 'loopback',
    COOKIE_SECURE: 'false',
  });
  const { receiver, env } = stack;
  const api = await startApiOnStack(env);
  const { db, temporal, base, call } = api;

  try {
    await stack.ready();
    const { auth, userId } = await api.accountWithWebhook({
      name: 'bench',
      url: receiver.url('/hook'),
      secret: SECRET,
    });
    type Planted = { id: string; path: string };
    const plant = async (): Promise<Planted> => {
      const canary = await call('/api/canaries', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ kind: 'url', platform: 'bench' }),
      });
      return { id: canary.canary_id as string, path: new URL(canary.value as string).pathname };
    };

    /** The delivery that `matches`, once it has arrived and its signature verifies. */
    const verified = async (matches: (hit: Hit) => boolean) => {
      const hit = await receiver.arrival((h) => h.path === '/hook' && matches(h));
      const { ok } = verifyWebhookSignature(SECRET, {
        rawBody: hit.rawBody,
        timestamp: hit.headers['x-service-timestamp'] as string,
        signature: hit.headers['x-service-signature'] as string,
      });
      if (!ok) throw new Error('a webhook failed verification');
    };
    /**
     * The canary a delivery's payload names, parsed once per delivery: every wait looks at all the
     * deliveries before it, and parsing each again would charge the tripwires' runs with the
     * benchmark's own growing work.
     */
    const canaryOf = new WeakMap<Hit, string>();
    const namedCanary = (hit: Hit) => {
      let canaryId = canaryOf.get(hit);
      if (canaryId === undefined) {
        const payload = JSON.parse(hit.rawBody.toString()) as { data: { canaryId?: string } };
        canaryId = payload.data.canaryId ?? '';
        canaryOf.set(hit, canaryId);
      }
      return canaryId;
    };
    /** A canary's alert: its payload names the canary. */
    const alerted = (canaryId: string) => verified((h) => namedCanary(h) === canaryId);
    /**
     * Once these tripwires' hits are recorded and the alerts of their events have ended (the
     * storm's follow-up included): what a run caused is then over.
     */
    let stuck = 0;
    const settled = async (canaries: Planted[], hits: number) => {
      await api.hitsCounted(
        canaries.map((c) => c.id),
        hits,
      );
      const events = await db.db
        .collection<{ _id: string }>('threat_events')
        .find({ canaryId: { $in: canaries.map((c) => c.id) } }, { projection: { _id: 1 } })
        .toArray();
      // Each event's alert, and its storm's follow-up when one was started (the API's starts are
      // made by the time the hits are counted: the follow-up's when its first later hit is).
      const workflows = events.flatMap((e) => [`alert-${e._id}`, followUpIdOf(e._id)]);
      let open = workflows.length;
      const ended = Promise.all(
        workflows.map((id) =>
          temporal.client.workflow
            .getHandle(id)
            .result()
            .catch(() => undefined)
            .finally(() => open--),
        ),
      );
      // An alert that has not ended a minute later is reported, not waited for: the run goes on.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([ended, new Promise((r) => (timer = setTimeout(r, SETTLE_MS)))]);
      clearTimeout(timer);
      if (open) {
        stuck += open;
        console.error(
          `${open} alert workflows still running ${SETTLE_MS / 1000} s after their run`,
        );
      }
    };
    /** A ready alert: its delivery id starts with its workflow id. */
    const delivered = (threatEventId: string) =>
      verified((h) =>
        String(h.headers['x-service-delivery']).startsWith(`alert-${threatEventId}:`),
      );
    /**
     * Each measured alert's wall-clock times (Temporal's start time is the same host's clock):
     * where the time between a request and its webhook goes, split at the workflow's start.
     */
    type Timed = { workflowId: () => Promise<string>; sentAt: number; arrivedAt: number };
    const readyTimes: Timed[] = [];
    const tripwireTimes: Timed[] = [];
    const readyAlert = async (i: number, times?: Timed[]) => {
      const threatEventId = `thr_ready_${i}_${Date.now()}`;
      const sentAt = Date.now();
      const started = performance.now();
      await startAlert(temporal, {
        accountId: userId,
        payload: tripwirePayload(threatEventId),
        threatEventId,
      });
      await delivered(threatEventId);
      const ms = performance.now() - started;
      const workflowId = () => Promise.resolve(`alert-${threatEventId}`);
      times?.push({ workflowId, sentAt, arrivedAt: Date.now() });
      return ms;
    };
    /** The alert workflow of a canary's (only) threat event. */
    const alertOf = async (canaryId: string) => {
      const event = await db.db
        .collection<{ _id: string }>('threat_events')
        .findOne({ canaryId }, { projection: { _id: 1 } });
      return `alert-${event!._id}`;
    };
    /** `hits` requests, 10 at a time in turn from each of `sources` addresses. */
    const fire = (path: (i: number) => string, hits = HITS, sources = 5) =>
      pool(hits, CONCURRENCY, async (i) => {
        const started = performance.now();
        const res = await fetch(`${base}${path(i)}`, {
          headers: { 'x-forwarded-for': `203.0.113.${Math.floor(i / 10) % sources}` },
        });
        await res.arrayBuffer();
        return performance.now() - started;
      });
    // Warm-up: compiled code and open connections in every process, as a running service has
    // them; each batch a small flood, tripwires' alerts and ready ones, then their settling.
    let warmRun = 0;
    const warmed = await warmUp(async () => {
      const run = warmRun++;
      const targets = await Promise.all(Array.from({ length: 5 }, plant));
      await fire((i) => targets[i % targets.length]!.path, 500);
      await fire((i) => `/r/warm-up-${run}-${i}`, 500);
      await pool(10, 5, async (i) => {
        await fetch(`${base}${targets[i % targets.length]!.path}`);
        return readyAlert(-1 - 10 * run - i);
      });
      await settled(targets, 510);
    }, stack.databasePid);
    const cpu = stack.cpu({ api: api.pid, client: process.pid });
    const database = await databaseSettler(stack.databasePid, cpu);
    console.log(
      `> ${warmed}; each run ends once the database is back at rest (${database.restMs.toFixed(0)} ms of CPU per 2.5 s), and what the stack spends at rest meanwhile is not counted`,
    );
    const maxRounds = roundOptions.maxRounds;

    // Canaries planted beforehand (planting is not what is measured): each round fires new ones.
    const fresh: Planted[] = [];
    for (let i = 0; i < ALERTS * maxRounds; i++) fresh.push(await plant());
    let readyRun = 0;
    let fired = 0;
    /** The tripwire run's canaries, settled after it. */
    let round: Planted[] = [];
    const alerts = await interleave(
      {
        'ready alert, start → webhook (baseline)': async () => {
          const from = ALERTS * readyRun++;
          const timed = await pool(ALERTS, CONCURRENCY, (i) => readyAlert(from + i, readyTimes));
          return { ops: ALERTS, ...timed };
        },
        // As the baseline's, the run ends with its alerts at the webhook (its CPU window then waits
        // for the database's rest, which the hits' seals and the outcomes' records reach only once
        // written); that they are all over is checked after it, as the check's own reads and
        // Temporal calls are the benchmark's, not the tripwires'.
        'tripwire request → webhook': {
          run: async () => {
            round = fresh.slice(fired, (fired += ALERTS));
            const timed = await pool(ALERTS, CONCURRENCY, async (i) => {
              const canary = round[i]!;
              const sentAt = Date.now();
              const started = performance.now();
              await fetch(`${base}${canary.path}`, {
                headers: { 'x-forwarded-for': `198.51.100.${(fired + i) % 250}` },
              });
              await alerted(canary.id);
              const ms = performance.now() - started;
              tripwireTimes.push({
                workflowId: () => alertOf(canary.id),
                sentAt,
                arrivedAt: Date.now(),
              });
              return ms;
            });
            return { ops: ALERTS, ...timed };
          },
          finish: () => settled(round, ALERTS),
        },
      },
      cpu,
      { ...roundOptions, settle: database.settled },
    );

    // Two floods against the same route answering unknown tokens: each round's hits on 10 new
    // tripwires, each from 5 sources (50 new storms, each later hit joining one), and on one new
    // tripwire from one source (one storm: an attacker replaying what it found).
    const floodTargets: Planted[][] = [];
    const stormTargets: Planted[] = [];
    for (let r = 0; r < maxRounds; r++) {
      const round: Planted[] = [];
      for (let i = 0; i < 10; i++) round.push(await plant());
      floodTargets.push(round);
      stormTargets.push(await plant());
    }
    let floods = 0;
    let storms = 0;
    let unknown = 0;
    const flood = await interleave(
      {
        'unknown token (baseline)': async () => ({
          ops: HITS,
          ...(await fire((i) => `/r/not-a-tripwire-${unknown++}-${i}`)),
        }),
        // The rate is the answers'; the run ends once the hits are recorded and their alerts
        // have ended, so the CPU they caused counts here and not in the next run.
        'live tripwire hits, 50 storms': async () => {
          const targets = floodTargets[floods++]!;
          const timed = await fire((i) => targets[i % targets.length]!.path);
          await settled(targets, HITS);
          return { ops: HITS, ...timed };
        },
        'live tripwire hits, one storm': async () => {
          const target = stormTargets[storms++]!;
          const timed = await fire(() => target.path, HITS, 1);
          await settled([target], HITS);
          return { ops: HITS, ...timed };
        },
      },
      cpu,
      { ...roundOptions, settle: database.settled },
    );
    const ids = [...floodTargets.slice(0, floods).flat(), ...stormTargets.slice(0, storms)].map(
      (t) => t.id,
    );
    const expected = HITS * (floods + storms);
    const recorded = await api.hitsLogged(ids);
    // Each storm's alert: started within a second of its first hit (the API starts
    // it; the reconciler would start a missed one only much later).
    const events = await db.db
      .collection<{ _id: string; firstHitAt: Date }>('threat_events')
      .find({ canaryId: { $in: ids } })
      .toArray();
    const startDelays: number[] = [];
    for (const event of events) {
      const started = await temporal.client.workflow
        .getHandle(`alert-${event._id}`)
        .describe()
        .then(
          (d) => d.startTime.getTime() - event.firstHitAt.getTime(),
          () => Number.POSITIVE_INFINITY,
        );
      startDelays.push(started);
    }
    startDelays.sort((a, b) => a - b);

    /** p50 of request → workflow start and of workflow start → webhook. */
    const split = async (times: Timed[]) => {
      const before: number[] = [];
      const after: number[] = [];
      for (const t of times) {
        const { startTime } = await temporal.client.workflow
          .getHandle(await t.workflowId())
          .describe();
        before.push(startTime.getTime() - t.sentAt);
        after.push(t.arrivedAt - startTime.getTime());
      }
      const p50 = (ms: number[]) =>
        pct(
          ms.sort((a, b) => a - b),
          50,
        ).toFixed(0);
      return `${p50(before)} ms, then ${p50(after)} ms to the webhook`;
    };
    const readySplit = await split(readyTimes);
    const tripwireSplit = await split(tripwireTimes);

    printComparison(
      `Tripwire → verified webhook (ALERT_GATHER_MS=${values['gather-ms']}), ${ALERTS} alerts a round, ${CONCURRENCY} at a time`,
      alerts,
    );
    console.log(
      `> to the alert workflow's start, p50: ready alert (the start call) ${readySplit}; tripwire (the request) ${tripwireSplit}`,
    );
    printComparison(`${HITS} requests a round, ${CONCURRENCY} at a time`, flood);
    console.log(
      `\n> recorded ${recorded} of ${expected} live hits; ${events.length} storms, alert started after its first hit: p50 ${pct(startDelays, 50).toFixed(0)} ms, p99 ${pct(startDelays, 99).toFixed(0)} ms, max ${pct(startDelays, 100).toFixed(0)} ms`,
    );
    if (stuck) console.log(`\n> ${stuck} alerts had not ended a minute after their run`);
    if (recorded !== expected) throw new Error(`lost ${expected - recorded} hits`);
  } finally {
    await api.stop();
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
