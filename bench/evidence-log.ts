/**
 * The Merkle log's costs, each against a baseline measured in the same run:
 * - sealed appends with the tree (record, leaf, hash entry, head) against the same store appending
 *   no leaf (the appends before the tree), one at a time and 100 at once, interleaved over rounds;
 * - integrating `--leaves` leaves into stored subtrees and signing a checkpoint;
 * - inclusion and consistency proofs at that size (p50/p99, one client), against one read by `_id`.
 *
 *   npm run bench:evidence-log -- [--leaves 1000000] [--proofs 2000] [--appends 300] [--rounds 3]
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
import { pct } from './support/latency';
import { seedLeaves } from './support/seed-leaves';

const { values } = parseArgs({
  options: {
    leaves: { type: 'string', default: '1000000' },
    proofs: { type: 'string', default: '2000' },
    appends: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '3' },
  },
  strict: true,
});
const LEAVES = Number(values.leaves);
const PROOFS = Number(values.proofs);
const APPENDS = Number(values.appends);
const ROUNDS = Number(values.rounds);
const data = (i: number) => ({ at: new Date(1_790_000_000_000 + i).toISOString(), i });

async function perSecond(n: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) await op(i);
  return n / ((performance.now() - started) / 1000);
}

async function latencies(n: number, op: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await op(i);
    out.push(performance.now() - started);
  }
  return out.sort((a, b) => a - b);
}

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

    const rates = { single: [[], []], batch: [[], []] } as Record<string, [number[], number[]]>;
    for (let round = 0; round < ROUNDS; round++) {
      console.error(`appends, round ${round + 1} of ${ROUNDS}…`);
      for (const [i, store] of [without, withTree].entries()) {
        const account = `usr_${i}_${round}`;
        rates.single![i]!.push(
          await perSecond(APPENDS, (n) => store.append(account, { kind: 'bench', data: data(n) })),
        );
        const batch = Array.from({ length: 100 }, (_, n) => ({ kind: 'bench', data: data(n) }));
        rates.batch![i]!.push(
          100 *
            (await perSecond(Math.max(1, APPENDS / 100), () =>
              store.appendMany(`${account}_b`, batch),
            )),
        );
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    console.log(
      '\n| Sealed appends (one client, sequential) | with the tree per s | without per s | ratio |',
    );
    console.log('|---|---:|---:|---:|');
    for (const [name, label] of [
      ['single', 'append one record'],
      ['batch', 'append 100 at once, per record'],
    ]) {
      const [base, tree] = rates[name!]!.map(median);
      console.log(
        `| ${label} | ${tree!.toFixed(0)} | ${base!.toFixed(0)} | ${((tree! / base!) * 100).toFixed(0)} % |`,
      );
    }

    console.error(`seeding ${LEAVES} leaves…`);
    const leaves = db.collection<LeafDoc>(leavesIndexes.collection);
    const size = await seedLeaves(db, await log.leaves.size(), LEAVES);
    console.error(`integrating ${size} leaves…`);
    const integrating = performance.now();
    const checkpoint = (await log.checkpoints.issue())!;
    const integrateSeconds = (performance.now() - integrating) / 1000;
    const root = Buffer.from(checkpoint.rootHash, 'hex');

    console.error(
      `${PROOFS} inclusion proofs, ${PROOFS} reads by _id, ${PROOFS / 10} consistency proofs…`,
    );
    const reads = await latencies(PROOFS, () => leaves.findOne({ _id: randomInt(size) }));
    const inclusions = await latencies(PROOFS, async () => {
      const index = randomInt(size);
      const [leaf, proof] = await Promise.all([
        leaves.findOne({ _id: index }),
        log.tree.inclusionProof(index, size),
      ]);
      if (!verifyInclusion(index, size, recordLeafHash(leaf!.contentHash), proof, root)) {
        throw new Error(`inclusion proof of ${index} does not verify`);
      }
    });
    const consistencies = await latencies(Math.max(1, PROOFS / 10), async () => {
      const from = 1 + randomInt(size);
      const [proof, fromRoot] = await Promise.all([
        log.tree.consistencyProof(from, size),
        log.tree.compute((lookup) => rootHash(from, lookup)),
      ]);
      if (!verifyConsistency(from, size, proof, fromRoot, root)) {
        throw new Error(`consistency proof ${from} → ${size} does not verify`);
      }
    });

    console.log(
      `\nTree of ${size} leaves: integrated and signed in ${integrateSeconds.toFixed(1)} s (${(size / integrateSeconds).toFixed(0)} leaves per s).`,
    );
    console.log('\n| At ' + size + ' leaves (one client) | p50 ms | p99 ms |');
    console.log('|---|---:|---:|');
    for (const [name, xs] of [
      ['one leaf read by `_id` (baseline)', reads],
      ['inclusion proof (leaf + O(log n) subtrees, verified)', inclusions],
      ['consistency proof (and the earlier root, verified)', consistencies],
    ] as const) {
      console.log(`| ${name} | ${pct(xs, 50).toFixed(2)} | ${pct(xs, 99).toFixed(2)} |`);
    }
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
