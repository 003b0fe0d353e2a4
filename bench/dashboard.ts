/**
 * `GET /api/dashboard`'s figures (src/dashboard/dashboard.ts, the service's own code) for one
 * account with the same month of activity, on a database holding nothing else and on one holding
 * `--hits` hits in all (other accounts' hits, and this account's own older than the window), call
 * of `--calls` calls each, the two taking turns round by round on the same server until resolved
 * (bench/support/rounds.ts): the ratio large / small says whether the figures read only the
 * account's window (about 1) or grow with the data; beside it, the CPU per call of the database
 * and of this process (the dashboard's code runs here, as in the API).
 *
 *   npm run bench:dashboard -- [--hits 1000000] [--window-hits 2000] [--calls 100]
 *       [--data-dir .data/bench-dashboard] [--min-rounds 5] [--max-rounds 15]
 *
 * The large database is filled once (minutes at 1,000,000 hits, with progress) and kept in the
 * data folder, so later runs start measuring at once; the fill is set-up, not measured.
 * MONGODB_URI measures another server instead (its CPU is then not read).
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Db, Document } from 'mongodb';
import { ChannelsRepository } from '../src/alerts/channels.repository';
import { Dashboard } from '../src/dashboard/dashboard';
import { ALL_INDEXES } from '../src/db/indexes';
import { connectMongo, ensureIndexes } from '../src/db/mongo';
import { freePort, provideMongo } from '../tools/stack';
import { StackCpu } from './support/cpu';
import { interleave, printComparison, type Variant } from './support/rounds';

const { values } = parseArgs({
  options: {
    hits: { type: 'string', default: '1000000' },
    'window-hits': { type: 'string', default: '2000' },
    calls: { type: 'string', default: '100' },
    'data-dir': { type: 'string', default: '.data/bench-dashboard' },
  },
  allowPositionals: true,
  strict: false,
});
const HITS = Number(values.hits);
const WINDOW_HITS = Number(values['window-hits']);
const CALLS = Number(values.calls);
const DATA_DIR = String(values['data-dir']);
const ACCOUNT = 'usr_bench_dashboard';
const DAY_MS = 86_400_000;
const NOW = new Date('2026-11-25T12:00:00Z');

/** A hit, its threat event (one per ten hits) and delivery, shaped as the repositories write them. */
function hit(i: number, accountId: string, at: Date): Document {
  return {
    _id: `hit_${accountId}_${i}`,
    accountId,
    canaryId: `cnr_${accountId}_${i % 20}`,
    threatEventId: `thr_${accountId}_${Math.floor(i / 10)}`,
    at,
    source: { ip: `198.51.100.${i % 250}`, userAgent: 'bench', via: 'url', mailServer: null },
    requestId: null,
    evidence: { logId: `evd_${i}`, seq: i + 1, contentHash: 'x' },
  };
}
const event = (i: number, accountId: string, at: Date): Document => ({
  _id: `thr_${accountId}_${i}`,
  accountId,
  canaryId: `cnr_${accountId}_${i % 20}`,
  firstHitAt: at,
  lastHitAt: at,
  hitCount: 10,
  alert: {
    data: { alertLevel: ['CRITICAL', 'HIGH', 'MEDIUM'][i % 3], attacker: { country: 'NL' } },
  },
});
const delivery = (i: number, accountId: string, at: Date): Document => ({
  _id: `dlv_${accountId}_${i}`,
  accountId,
  channelId: 'chn_bench',
  createdAt: at,
  outcome: i % 7 === 0 ? 'failed' : 'delivered',
});

async function insertAll(db: Db, name: string, count: number, make: (i: number) => Document) {
  const started = Date.now();
  for (let i = 0; i < count; i += 5000) {
    const batch = Array.from({ length: Math.min(5000, count - i) }, (_, j) => make(i + j));
    await db.collection(name).insertMany(batch, { ordered: false });
    if (Date.now() - started > 10_000 && i % 100_000 === 0) {
      console.log(`  filling ${db.databaseName}.${name}: ${i} / ${count}`);
    }
  }
}

/** The measured account's month: `WINDOW_HITS` hits spread over the last 30 days. */
async function fillAccount(db: Db): Promise<void> {
  const inWindow = (i: number, n: number) => new Date(NOW.getTime() - ((i * 29) / n) * DAY_MS);
  await insertAll(db, 'threat_hits', WINDOW_HITS, (i) => hit(i, ACCOUNT, inWindow(i, WINDOW_HITS)));
  const events = WINDOW_HITS / 10;
  await insertAll(db, 'threat_events', events, (i) => event(i, ACCOUNT, inWindow(i, events)));
  await insertAll(db, 'alert_deliveries', events, (i) => delivery(i, ACCOUNT, inWindow(i, events)));
}

/**
 * Everything else up to `HITS` hits: a fifth this account's own before the window (a year of
 * history), the rest 1,000 other accounts' within it, with their events and deliveries.
 */
async function fillOthers(db: Db): Promise<void> {
  const rest = HITS - WINDOW_HITS;
  const old = Math.floor(rest / 5);
  const before = (i: number) => new Date(NOW.getTime() - (40 + (i % 300)) * DAY_MS);
  const recent = (i: number) => new Date(NOW.getTime() - (i % 29) * DAY_MS);
  const other = (i: number) => `usr_other_${i % 1000}`;
  await insertAll(db, 'threat_hits', old, (i) => hit(WINDOW_HITS + i, ACCOUNT, before(i)));
  await insertAll(db, 'threat_hits', rest - old, (i) => hit(i, other(i), recent(i)));
  const events = Math.floor((rest - old) / 10);
  await insertAll(db, 'threat_events', events, (i) => event(i, other(i), recent(i)));
  await insertAll(db, 'alert_deliveries', events, (i) => delivery(i, other(i), recent(i)));
}

async function fill(db: Db, large: boolean): Promise<void> {
  const marker = db.collection<{ _id: string; hits: number; window: number }>('bench_marker');
  const done = await marker.findOne({ _id: 'filled' });
  const hits = large ? HITS : WINDOW_HITS;
  if (done?.hits === hits && done.window === WINDOW_HITS) return ensureIndexes(db, ALL_INDEXES);
  await db.dropDatabase();
  await ensureIndexes(db, ALL_INDEXES);
  await fillAccount(db);
  if (large) await fillOthers(db);
  await marker.insertOne({ _id: 'filled', hits, window: WINDOW_HITS });
}

async function main(): Promise<void> {
  const dataDir = resolve(DATA_DIR);
  await mkdir(dataDir, { recursive: true });
  const log = (line: string) => process.env.BENCH_SERVER_LOGS && console.log(line);
  const mongo = await provideMongo({
    dataDir,
    port: await freePort(),
    log,
    readyWithinMs: 900_000,
  });
  try {
    const { client } = await connectMongo(mongo.address, 'admin');
    const dbs = {
      small: client.db('bench_dashboard_small'),
      large: client.db('bench_dashboard_large'),
    };
    console.log(
      `database: ${mongo.description}; filling ${WINDOW_HITS} hits, and ${HITS} hits in all`,
    );
    await fill(dbs.small, false);
    await fill(dbs.large, true);
    const figures = Object.fromEntries(
      Object.entries(dbs).map(([size, db]) => {
        const dashboard = new Dashboard(db, new ChannelsRepository(db));
        return [size, () => dashboard.figures(ACCOUNT, 30, NOW)];
      }),
    ) as Record<'small' | 'large', () => ReturnType<Dashboard['figures']>>;
    // Both databases must give the same figures, or the comparison means nothing.
    const [a, b] = [await figures.small(), await figures.large()];
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error('the two databases disagree');
    const calls =
      (size: 'small' | 'large'): Variant =>
      async () => {
        const latencies: number[] = [];
        for (let i = 0; i < CALLS; i++) {
          const started = performance.now();
          await figures[size]();
          latencies.push(performance.now() - started);
        }
        return { ops: CALLS, latencies };
      };
    printComparison(
      `Dashboard figures for one account with ${WINDOW_HITS} hits in its window: a database of only this account's month (baseline) against one of ${HITS} hits in all; ${CALLS} calls a round each, one at a time, on ${mongo.description}`,
      await interleave(
        {
          "only this account's month (baseline)": calls('small'),
          [`${HITS} hits in all`]: calls('large'),
        },
        new StackCpu({ client: process.pid, database: mongo.pid }),
      ),
    );
    await client.close();
  } finally {
    await mongo.stop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
