/**
 * The Merkle log's costs, each against a baseline measured in the same run, the variants taking
 * turns round by round until resolved (bench/support/rounds.ts), with the CPU per operation of
 * the database and of this process (where the log's code runs):
 * - sealed appends with the tree (record, leaf, hash entry, head) against the same store appending
 *   no leaf (the appends before the tree), one at a time and 100 at once, `--appends` a round;
 * - integrating `--leaves` leaves into stored subtrees and signing a checkpoint: a one-off (the
 *   leaves are integrated once), so one run, with its CPU per leaf and the load average;
 * - inclusion and consistency proofs at that size (one client), against one read by `_id`,
 *   `--proofs` a round (a tenth of that for consistency proofs).
 *
 *   npm run bench:evidence-log -- [--leaves 1000000] [--proofs 500] [--appends 300]
 *       [--min-rounds 5] [--max-rounds 15]
 *
 * Uses MONGODB_URI when set (the size is meant for a real MongoDB), otherwise the embedded server.
 */
import { randomInt } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MongoClient } from 'mongodb';
import { ensureIndexes } from '../src/db/mongo';
import { EvidenceLog } from '../src/evidence/log/evidence-log';
import { EvidenceStore } from '../src/evidence/evidence.store';
import { evidenceIndexes } from '../src/evidence/evidence.repository';
import { leavesIndexes, type LeafDoc } from '../src/evidence/log/log-leaves';
import { rootHash, verifyConsistency, verifyInclusion } from '../src/evidence/log/merkle';
import { recordLeafHash } from '../src/evidence/log/log-tree';
import { generateSigner } from '../src/evidence/log/signed-note';
import { freePort, provideMongo, type Service } from '../tools/stack';
import { StackCpu } from './support/cpu';
import { interleave, printComparison, runOnce } from './support/rounds';
import { sequential } from './support/latency';
import { seedLeaves } from './support/seed-leaves';

const { values } = parseArgs({
  options: {
    leaves: { type: 'string', default: '1000000' },
    proofs: { type: 'string', default: '500' },
    appends: { type: 'string', default: '300' },
  },
  allowPositionals: true,
  strict: false,
});
const LEAVES = Number(values.leaves);
const PROOFS = Number(values.proofs);
const APPENDS = Number(values.appends);
const data = (i: number) => ({ at: new Date(1_790_000_000_000 + i).toISOString(), i });

async function main(): Promise<void> {
  let mongo: Service | undefined;
  if (!process.env.MONGODB_URI) {
    const dataDir = await mkdtemp(join(tmpdir(), 'tripwire-bench-log-'));
    mongo = await provideMongo({ dataDir, port: await freePort(), log: () => undefined });
  }
  const client = await MongoClient.connect(process.env.MONGODB_URI ?? mongo!.address);
  const db = client.db(`bench_log_${Date.now()}`);
  await ensureIndexes(db, [evidenceIndexes, leavesIndexes]);
  try {
    const log = new EvidenceLog(
      db,
      generateSigner('bench.localhost/evidence').signer,
      () => new Date(),
    );
    const withTree = new EvidenceStore(db, () => new Date(), log.leaves);
    const without = new EvidenceStore(db, () => new Date(), {
      append: async (_entries, durable) => {
        await durable?.([]);
        return [];
      },
    });

    const cpu = new StackCpu({ client: process.pid, database: mongo?.pid });
    const batch = Array.from({ length: 100 }, (_, n) => ({ kind: 'bench', data: data(n) }));
    printComparison(
      `Sealed appends, one record at a time, ${APPENDS} a round (one client)`,
      await interleave(
        {
          'without the tree (baseline)': sequential(APPENDS, (n) =>
            without.append('usr_without', { kind: 'bench', data: data(n) }),
          ),
          'with the tree': sequential(APPENDS, (n) =>
            withTree.append('usr_tree', { kind: 'bench', data: data(n) }),
          ),
        },
        cpu,
      ),
    );
    const batches = Math.max(1, APPENDS / 100);
    printComparison(
      `Sealed appends, 100 at once, ${batches} batches a round (per record; one client)`,
      await interleave(
        {
          'without the tree (baseline)': sequential(
            batches,
            () => without.appendMany('usr_without_b', batch),
            100,
          ),
          'with the tree': sequential(batches, () => withTree.appendMany('usr_tree_b', batch), 100),
        },
        cpu,
      ),
    );

    console.error(`seeding ${LEAVES} leaves…`);
    const leaves = db.collection<LeafDoc>(leavesIndexes.collection);
    const size = await seedLeaves(db, await log.leaves.size(), LEAVES);
    console.error(`integrating ${size} leaves…`);
    let checkpoint!: NonNullable<Awaited<ReturnType<typeof log.checkpoints.issue>>>;
    printComparison(
      `Integrating a tree of ${size} leaves into stored subtrees and signing a checkpoint (ops are leaves; p50 the whole run)`,
      await runOnce(
        'integrate and sign',
        async () => {
          const started = performance.now();
          checkpoint = (await log.checkpoints.issue())!;
          return { ops: size, latencies: [performance.now() - started] };
        },
        cpu,
      ),
    );
    const root = Buffer.from(checkpoint.rootHash, 'hex');

    console.error(`proofs at ${size} leaves…`);
    const consistencies = Math.max(1, PROOFS / 10);
    printComparison(
      `At ${size} leaves, one client: ${PROOFS} reads and inclusion proofs, ${consistencies} consistency proofs a round`,
      await interleave(
        {
          'one leaf read by `_id` (baseline)': sequential(PROOFS, () =>
            leaves.findOne({ _id: randomInt(size) }),
          ),
          'inclusion proof (leaf + O(log n) subtrees, verified)': sequential(PROOFS, async () => {
            const index = randomInt(size);
            const [leaf, proof] = await Promise.all([
              leaves.findOne({ _id: index }),
              log.tree.inclusionProof(index, size),
            ]);
            if (!verifyInclusion(index, size, recordLeafHash(leaf!.contentHash), proof, root)) {
              throw new Error(`inclusion proof of ${index} does not verify`);
            }
          }),
          'consistency proof (and the earlier root, verified)': sequential(
            consistencies,
            async () => {
              const from = 1 + randomInt(size);
              const [proof, fromRoot] = await Promise.all([
                log.tree.consistencyProof(from, size),
                log.tree.compute((lookup) => rootHash(from, lookup)),
              ]);
              if (!verifyConsistency(from, size, proof, fromRoot, root)) {
                throw new Error(`consistency proof ${from} → ${size} does not verify`);
              }
            },
          ),
        },
        cpu,
      ),
    );
  } finally {
    await db.dropDatabase();
    await client.close();
    await mongo?.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
