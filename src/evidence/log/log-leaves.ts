import { MongoBulkWriteError, type Collection, type Db } from 'mongodb';
import type { CollectionIndexes } from '../../db/mongo';
import { isDuplicateKeyError, journaled, unjournaled } from '../../db/mongo';
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

interface Append {
  entries: LeafEntry[];
  durable: (indexes: number[]) => Promise<void>;
}

type Appended = { indexes: number[] } | { error: unknown };

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
 *
 * The insert does not wait for the disk: each caller's `durable` (the evidence store's synced
 * chain-head write) makes it durable, since a synced write carries every write the server took
 * before it (the journal is written in order, and the embedded server syncs its whole file). A
 * batch is done only when they are, so the next batch never goes in after leaves a restarted
 * database may have lost, which would leave a gap.
 */
export class LeafLog {
  private readonly leaves: Collection<LeafDoc>;
  private readonly journaledLeaves: Collection<LeafDoc>;
  /**
   * Where this process expects the next leaf: one past its own last durable insert, never past the
   * end (leaves are never removed), so an insert there cannot leave a gap; stale when another
   * process appended, which the collision shows, and then read again. Forgotten on any error.
   */
  private next: number | null = null;
  private readonly batches = new KeyedBatches<Append, Appended>((_key, appends) =>
    this.writeGroups(appends),
  );

  constructor(db: Db) {
    this.leaves = unjournaled(db).collection<LeafDoc>(leavesIndexes.collection);
    this.journaledLeaves = journaled(db).collection<LeafDoc>(leavesIndexes.collection);
  }

  /**
   * The leaf index of each entry, appending those not in the log yet. `durable` gets the indexes
   * once the leaves are in, and must make them durable (a synced write) before it resolves; by
   * default a synced write of its own.
   */
  async append(
    entries: readonly LeafEntry[],
    durable: (indexes: number[]) => Promise<void> = () => this.sync(),
  ): Promise<number[]> {
    const appended = await this.batches.submit(TREE, { entries: [...entries], durable });
    if ('error' in appended) throw appended.error;
    return appended.indexes;
  }

  /**
   * A synced write that changes nothing (no leaf has a negative index), so everything written
   * before it is durable. `deleteMany` because the driver never retries it (a retry could reach a
   * restarted database, which has lost what it should sync).
   */
  private async sync(): Promise<void> {
    await this.journaledLeaves.deleteMany({ _id: -1 });
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

  /** One insert for every caller's entries, then each caller's sync; every caller gets its own. */
  private async writeGroups(appends: Append[]): Promise<Appended[]> {
    let next: number | null;
    let placed: Map<string, number>;
    try {
      ({ next, placed } = await this.write(appends.flatMap((a) => a.entries)));
    } catch (err) {
      this.next = null;
      throw err;
    }
    const indexes = appends.map((a) => a.entries.map((e) => placed.get(e.logId)!));
    const synced = await Promise.allSettled(appends.map((a, i) => a.durable(indexes[i]!)));
    // Any failure may be the database's restart, which may have lost the insert: read the end again.
    this.next = synced.every((s) => s.status === 'fulfilled') ? next : null;
    return synced.map((s, i) =>
      s.status === 'fulfilled' ? { indexes: indexes[i]! } : { error: s.reason as unknown },
    );
  }

  /** Inserts the entries not in the log yet; `next` is one past the last leaf inserted. */
  private async write(
    entries: LeafEntry[],
  ): Promise<{ next: number | null; placed: Map<string, number> }> {
    const placed = new Map<string, number>();
    let pending = entries;
    let next = this.next;
    for (let attempt = 1; pending.length; attempt++) {
      next ??= await this.size();
      const start = next;
      const docs = pending.map((e, i) => ({ _id: start + i, ...e }));
      try {
        await this.leaves.insertMany(docs, { ordered: true });
        for (const d of docs) placed.set(d.logId, d._id);
        next += docs.length;
        break;
      } catch (err) {
        if (!isDuplicateKeyError(err) || attempt === MAX_ATTEMPTS) throw err;
        next = null;
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
    return { next, placed };
  }
}
