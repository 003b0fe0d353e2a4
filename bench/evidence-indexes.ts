/**
 * What the public hash check's index (`content_hash` on `evidence`) costs the embedded database per
 * sealed record, against the same records on a store without it, in one run: two servers of this
 * tree's build, started as tools/stack.ts starts them, each holding `--seed` sealed records first,
 * then taking turns at the same seals.
 *
 *   npm run bench:evidence-indexes -- [--seed 100000] [--records 6000] [--batch 20] [--rate 800]
 *                                     [--min-rounds 5] [--max-rounds 15]
 *
 * A seal is the records' part of what `EvidenceStore` writes for one batch: `--batch` records in
 * one insert (their `_id`s ordered by time, as `newTimeOrderedId` makes them; each a random SHA-256
 * content hash), then the chain head's write with `j: true` (the Merkle leaves written between are
 * left out: they are the same on both stores). `--rate` records a second, `--records` a run: a
 * flood's seals (`SEAL_GATHER_MS` gathers tens of hits into one). Every other index of the
 * service's is on both stores. The servers take turns as bench/support/embedded-servers.ts has
 * them (warmed up 1,000 records at a time, so the stores grow alike; each run ends once
 * both are at rest again, so the commits and compaction it causes count in it).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ALL_INDEXES } from '../src/db/indexes';
import { ensureIndexes } from '../src/db/mongo';
import { evidenceIndexes, type EvidenceDoc } from '../src/evidence/evidence.repository';
import {
  benchLog as log,
  interleaveServers,
  startEmbeddedServer,
  stopEmbeddedServers,
  type EmbeddedServer,
} from './support/embedded-servers';
import { timedSteps } from './support/latency';
import { randomHash, sealedHit } from './support/sealed-records';
import { printComparison } from './support/rounds';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '100000' },
    records: { type: 'string', default: '6000' },
    batch: { type: 'string', default: '20' },
    rate: { type: 'string', default: '800' },
  },
  strict: false,
});
const [SEED, RECORDS, BATCH, RATE] = [values.seed, values.records, values.batch, values.rate].map(
  Number,
) as [number, number, number, number];
if (
  !(Number.isInteger(SEED) && SEED >= 0) ||
  ![RECORDS, BATCH].every((n) => Number.isInteger(n) && n > 0) ||
  !(RATE > 0)
) {
  console.error(
    'usage: npm run bench:evidence-indexes -- [--seed N] [--records N] [--batch N] [--rate per second]',
  );
  process.exit(2);
}

const HASH_INDEX = 'content_hash';
const WARM_UP_RECORDS = 1000;
const ACCOUNT = 'acc_bench';

interface Server extends EmbeddedServer {
  seq: number;
}

async function start(dataDir: string, withHashIndex: boolean): Promise<Server> {
  const started = await startEmbeddedServer(dataDir);
  const { db } = started;
  await ensureIndexes(
    db,
    ALL_INDEXES.map((c) =>
      c === evidenceIndexes && !withHashIndex
        ? { ...c, indexes: c.indexes.filter((i) => i.name !== HASH_INDEX) }
        : c,
    ),
  );
  const server: Server = { ...started, seq: 0 };
  for (let filled = 0; filled < SEED; filled += 1000) {
    const n = Math.min(1000, SEED - filled);
    await db
      .collection<EvidenceDoc>('evidence')
      .insertMany(Array.from({ length: n }, () => sealedHit(ACCOUNT, ++server.seq)));
  }
  return server;
}

/** One seal: a batch of records, then the chain head's synced write. */
async function seal(server: Server): Promise<void> {
  const { db } = server;
  await db.collection<EvidenceDoc>('evidence').insertMany(
    Array.from({ length: BATCH }, () => sealedHit(ACCOUNT, ++server.seq)),
    { ordered: true },
  );
  await db
    .collection('evidence_heads')
    .updateMany(
      { _id: ACCOUNT as never },
      { $set: { seq: server.seq, hash: randomHash() } },
      { upsert: true, writeConcern: { journal: true } },
    );
}

/**
 * `--records` records in seals at `--rate` a second; to warm up, `WARM_UP_RECORDS` as fast as they
 * go (few, so the stores grow alike however long each server's JIT compiler takes to settle).
 */
async function run(server: Server, paced: boolean) {
  const seals = Math.ceil((paced ? RECORDS : WARM_UP_RECORDS) / BATCH);
  const timed = await timedSteps(seals, RATE / BATCH, paced, () => seal(server));
  return { ops: seals * BATCH, ...timed };
}

async function main() {
  const work = await mkdtemp(join(tmpdir(), 'bench-evidence-indexes-'));
  const servers: Server[] = [];
  try {
    log(`filling two stores with ${SEED} sealed records each`);
    servers.push(await start(join(work, 'with'), true), await start(join(work, 'without'), false));
    const [withIndex, without] = servers as [Server, Server];
    const comparison = await interleaveServers(
      [
        {
          name: 'every index (baseline)',
          server: withIndex,
          run: (paced) => run(withIndex, paced),
        },
        { name: `without ${HASH_INDEX}`, server: without, run: (paced) => run(without, paced) },
      ],
      { resolve: ['cpu'] },
    );
    printComparison(
      `sealed records (ops), ${RECORDS} a run in seals of ${BATCH} at ${RATE}/s, on stores holding ${SEED} and more; the embedded server`,
      comparison,
    );
  } finally {
    await stopEmbeddedServers(servers, work);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
