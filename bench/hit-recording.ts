/**
 * What one hit, one event, one alert costs the recorder, each against the way it was written
 * before, in the same run on the same database (the embedded server, or MONGODB_URI):
 * - a new storm, until its alert may be signalled: before, one event insert (the storm written
 *   beside the signal); now the storm claimed first, then the event written if missing;
 * - a batch joining an open storm, before its signal: before nothing; now the event's idempotent
 *   upsert (it may not be there yet after a crash or on another replica);
 * - a hit's writes (threat-log line and event count) with the default write concern against
 *   `j: true` (on a database that syncs before acknowledging a journaled write, this is the
 *   price of durability).
 *
 *   npm run bench:hit-recording -- [--ops 1000] [--concurrency 1]
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ThreatsRepository, type ThreatEvent } from '../src/canaries/threats.repository';
import { connectMongo, journaled } from '../src/db/mongo';
import { freePort, provideMongo } from '../tools/stack';
import { pct, pool } from './support/latency';

const { values } = parseArgs({
  options: {
    ops: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '1' },
  },
  allowPositionals: true,
  strict: false,
});
const OPS = Number(values.ops);
const CONCURRENCY = Number(values.concurrency);
const ROUNDS = 4;

const source = { ip: '203.0.113.9', userAgent: 'curl/8', via: 'url' as const, mailServer: null };
const eventOf = (id: string, at: Date): ThreatEvent => ({
  id,
  accountId: 'usr_bench',
  canaryId: 'cnr_bench',
  canaryKind: 'url',
  platform: 'curl',
  source,
  firstHitAt: at,
  lastHitAt: at,
  hitCount: 0,
  alert: null,
});

interface Figures {
  p50: number;
  p99: number;
}

/** Latencies of one batch of `ops` runs of `op`, numbered from `from`. */
async function latencies(op: (i: number) => Promise<unknown>, from: number, ops: number) {
  const timed = await pool(ops, CONCURRENCY, async (i) => {
    const started = performance.now();
    await op(from + i);
    return performance.now() - started;
  });
  return timed.latencies;
}

/**
 * `before` and `now`, `OPS` runs each after as many unmeasured ones (collections made, code warm),
 * taken in alternating rounds so that whatever else the shared machine does weighs on both alike.
 */
async function compare(
  before: (i: number) => Promise<unknown>,
  now: (i: number) => Promise<unknown>,
): Promise<[Figures, Figures]> {
  await latencies(before, 0, OPS);
  await latencies(now, 0, OPS);
  const taken: [number[], number[]] = [[], []];
  const per = Math.ceil(OPS / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    const from = OPS + round * per;
    taken[0].push(...(await latencies(before, from, per)));
    taken[1].push(...(await latencies(now, from, per)));
  }
  return taken.map((all) => {
    const sorted = all.sort((a, b) => a - b);
    return { p50: pct(sorted, 50), p99: pct(sorted, 99) };
  }) as [Figures, Figures];
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-hit-recording-'));
  const mongo = await provideMongo({ dataDir, port: await freePort(), log: () => undefined });
  const { client, db } = await connectMongo(mongo.address, `bench_hits_${Date.now()}`);
  try {
    const threats = new ThreatsRepository(db);
    const plain = db.collection<{ _id: string } & Record<string, unknown>>('threat_events_before');
    const stormsBefore = db.collection<{ _id: string } & Record<string, unknown>>('storms_before');
    const run = Date.now();
    const rows: [string, Figures, Figures][] = [];

    rows.push([
      'new storm, until the alert may be signalled',
      ...(await compare(
        async (i) => {
          const { id, ...rest } = eventOf(`thr_before_${run}_${i}`, new Date());
          await plain.insertOne({ _id: id, ...rest, alertPendingSince: rest.firstHitAt });
          // The storm was written beside the signal, off this path.
          void stormsBefore
            .updateOne(
              { _id: `cnr_${run}_${i}|203.0.113.9` },
              { $set: { threatEventId: id } },
              { upsert: true },
            )
            .catch(() => undefined);
        },
        async (i) => {
          const at = new Date();
          const id = await threats.claimStorm(`cnr_${run}_${i}|203.0.113.9`, at, 60_000);
          await threats.openEvent(eventOf(id, at));
        },
      )),
    ]);

    const joined = eventOf(`thr_joined_${run}`, new Date());
    await threats.openEvent(joined);
    rows.push([
      'batch joining an open storm, before its signal',
      ...(await compare(
        () => Promise.resolve(),
        () => threats.openEvent(joined),
      )),
    ]);

    const hits = (target: typeof db, name: string) => async (i: number) => {
      await target
        .collection(`hits_${name}`)
        .insertOne({ _id: `hit_${i}` as never, at: new Date() });
      await target
        .collection('events_count')
        .updateOne({ _id: name as never }, { $inc: { hitCount: 1 } }, { upsert: true });
    };
    rows.push([
      "a hit's writes, default write concern vs j: true",
      ...(await compare(hits(db, 'default'), hits(journaled(db), 'journaled'))),
    ]);

    console.log(`\n${OPS} operations, ${CONCURRENCY} at a time, on ${mongo.description}\n`);
    console.log('| Path | Before p50 / p99 (ms) | Now p50 / p99 (ms) | Added at the median (ms) |');
    console.log('|---|---|---|---|');
    for (const [name, before, now] of rows) {
      const ms = (s: typeof before) => `${s.p50.toFixed(2)} / ${s.p99.toFixed(2)}`;
      console.log(
        `| ${name} | ${ms(before)} | ${ms(now)} | ${(now.p50 - before.p50).toFixed(2)} |`,
      );
    }
  } finally {
    await client.close();
    await mongo.stop();
  }
}

void main();
