import type { Db } from 'mongodb';
import { leavesIndexes, type LeafDoc } from '../../src/evidence/log/log-leaves';
import { randomHash } from './sealed-records';

/**
 * Appends `count` leaves of random content hashes after the log's end, 10,000 at a time, straight
 * into the leaves collection (sealing that many records would take the benchmark's whole budget);
 * answers the log's size after them.
 */
export async function seedLeaves(db: Db, start: number, count: number): Promise<number> {
  const leaves = db.collection<LeafDoc>(leavesIndexes.collection);
  for (let done = 0; done < count; done += 10_000) {
    const docs = Array.from({ length: Math.min(10_000, count - done) }, (_, i) => ({
      _id: start + done + i,
      logId: `evd_bench_${start + done + i}`,
      accountId: 'usr_bench',
      seq: done + i + 1,
      contentHash: randomHash(),
    }));
    await leaves.insertMany(docs, { ordered: false });
  }
  return start + count;
}
