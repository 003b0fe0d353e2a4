import { MongoBulkWriteError, type Collection, type Db } from 'mongodb';
import type { CollectionIndexes } from '../../db/mongo';
import { isDuplicateKeyError } from '../../db/mongo';
import { KeyedBatches } from '../../keyed-batches';

/** One leaf of the deployment-wide Merkle log: a sealed record's content hash at its index. */
export interface LeafDoc {
  _id: number;
  logId: string;
  accountId: string;
  seq: number;
  contentHash: string;
}

export type LeafEntry = Omit<LeafDoc, '_id'>;

export const leavesIndexes: CollectionIndexes = {
  collection: 'evidence_leaves',
  indexes: [
    // One leaf per record, whoever appends it (the sealing process, or a cut healing after a crash).
    { key: { logId: 1 }, name: 'log_id_unique', unique: true },
    { key: { accountId: 1, seq: 1 }, name: 'account_seq' },
  ],
};

const MAX_ATTEMPTS = 50;
const TREE = 'tree';

/**
 * Appends sealed records to the Merkle log. The leaf index is the document's `_id` and each batch
 * is inserted at the index after the last leaf, in order, in one round trip: the `_id` index is
 * the arbiter between processes appending at once (a collision re-reads the end and tries again),
 * so indexes are never taken twice and, because a leaf goes in only after its predecessor exists,
 * never skipped. Within a process, appends from every account are group-committed.
 */
export class LeafLog {
  private readonly leaves: Collection<LeafDoc>;
  /**
   * Where this process expects the next leaf: one past its own last insert, never past the end
   * (leaves are never removed), so an insert there cannot leave a gap; stale when another process
   * appended, which the collision shows, and then read again.
   */
  private next: number | null = null;
  private readonly batches = new KeyedBatches<LeafEntry[], number[]>((_key, groups) =>
    this.writeGroups(groups),
  );

  constructor(db: Db) {
    this.leaves = db.collection<LeafDoc>(leavesIndexes.collection);
  }

  /** The leaf index of each entry, appending those not in the log yet. */
  append(entries: readonly LeafEntry[]): Promise<number[]> {
    return this.batches.submit(TREE, [...entries]);
  }

  /** Leaf indexes by log id, for the records that have one. */
  async indexesOf(logIds: readonly string[]): Promise<Map<string, number>> {
    const docs = await this.leaves
      .find({ logId: { $in: [...logIds] } }, { projection: { logId: 1 } })
      .toArray();
    return new Map(docs.map((d) => [d.logId, d._id]));
  }

  async countUpTo(accountId: string, seq: number): Promise<number> {
    return this.leaves.countDocuments({ accountId, seq: { $lte: seq } });
  }

  /** How many leaves the log holds: one past the last index. */
  async size(): Promise<number> {
    const last = await this.leaves.findOne({}, { sort: { _id: -1 }, projection: { _id: 1 } });
    return last ? last._id + 1 : 0;
  }

  private async writeGroups(groups: LeafEntry[][]): Promise<number[][]> {
    const placed = await this.write(groups.flat());
    return groups.map((group) => group.map((e) => placed.get(e.logId)!));
  }

  private async write(entries: LeafEntry[]): Promise<Map<string, number>> {
    const placed = new Map<string, number>();
    let pending = entries;
    for (let attempt = 1; pending.length; attempt++) {
      this.next ??= await this.size();
      const docs = pending.map((e, i) => ({ _id: this.next! + i, ...e }));
      try {
        await this.leaves.insertMany(docs, { ordered: true });
        for (const d of docs) placed.set(d.logId, d._id);
        this.next += docs.length;
        break;
      } catch (err) {
        if (!isDuplicateKeyError(err) || attempt === MAX_ATTEMPTS) throw err;
        this.next = null;
        const inserted = err instanceof MongoBulkWriteError ? err.insertedCount : 0;
        for (const d of docs.slice(0, inserted)) placed.set(d.logId, d._id);
        const rest = pending.slice(inserted);
        // Either the index was taken (another process appended) or the record has its leaf already
        // (a retried batch, or a cut that healed it).
        const elsewhere = await this.indexesOf(rest.map((e) => e.logId));
        for (const [logId, index] of elsewhere) placed.set(logId, index);
        pending = rest.filter((e) => !elsewhere.has(e.logId));
      }
    }
    return placed;
  }
}
