/**
 * What one hit, one event, one alert costs the recorder, each against the way it was written
 * before, in the same run on the same database (the embedded server, or MONGODB_URI):
 * - a new storm, until its alert may be started: before, one event insert (the storm written
 *   beside the signal); now the storm claimed first, then the event written if missing;
 * - a batch joining an open storm, before its signal: before nothing; now the event's idempotent
 *   upsert (it may not be there yet after a crash or on another replica);
 * - a hit's writes (threat-log line and event count) with the default write concern against
 *   `j: true` (on a database that syncs before acknowledging a journaled write, this is the
 *   price of durability).
 *
 *   npm run bench:hit-recording -- [--ops 250] [--concurrency 1] [--min-rounds 5] [--max-rounds 15]
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ThreatsRepository, type ThreatEvent } from '../src/canaries/threats.repository';
import { connectMongo, journaled } from '../src/db/mongo';
import { freePort, provideMongo } from '../tools/stack';
import { StackCpu } from './support/cpu';
import { pool } from './support/latency';
import { interleave, printComparison, type Comparison } from './support/rounds';

const { values } = parseArgs({
  options: {
    ops: { type: 'string', default: '250' },
    concurrency: { type: 'string', default: '1' },
  },
  allowPositionals: true,
  strict: false,
});
const OPS = Number(values.ops);
const CONCURRENCY = Number(values.concurrency);

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

/**
 * `before` and `now`, `OPS` runs a round after as many unmeasured ones (collections made, code
 * warm), taken in interleaved rounds so that whatever else the shared machine does weighs on both
 * alike, with the database's and this process's CPU per operation.
 */
async function compare(
  cpu: StackCpu,
  before: (i: number) => Promise<unknown>,
  now: (i: number) => Promise<unknown>,
): Promise<Comparison> {
  let from = 0;
  const batch = (op: (i: number) => Promise<unknown>) => async () => {
    const start = from;
    from += OPS;
    const timed = await pool(OPS, CONCURRENCY, async (i) => {
      const started = performance.now();
      await op(start + i);
      return performance.now() - started;
    });
    return { ops: OPS, latencies: timed.latencies };
  };
  await batch(before)();
  await batch(now)();
  return interleave({ before: batch(before), now: batch(now) }, cpu);
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
    const cpu = new StackCpu({ client: process.pid, database: mongo.pid });
    const rows: [string, Comparison][] = [];

    rows.push([
      'new storm, until the alert may be started',
      await compare(
        cpu,
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
          const [storm] = await threats.claimStorms(
            [{ stormKey: `cnr_${run}_${i}|203.0.113.9`, at }],
            60_000,
          );
          await threats.openEvents([eventOf(storm!.threatEventId, at)]);
        },
      ),
    ]);

    const joined = eventOf(`thr_joined_${run}`, new Date());
    await threats.openEvents([joined]);
    rows.push([
      'batch joining an open storm, before its signal',
      await compare(
        cpu,
        () => Promise.resolve(),
        () => threats.openEvents([joined]),
      ),
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
      await compare(cpu, hits(db, 'default'), hits(journaled(db), 'journaled')),
    ]);

    for (const [name, comparison] of rows) {
      printComparison(
        `${name}: before (baseline) and now; ${OPS} operations a round, ${CONCURRENCY} at a time, on ${mongo.description}`,
        comparison,
      );
    }
  } finally {
    await client.close();
    await mongo.stop();
  }
}

void main();
