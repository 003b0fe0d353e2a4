import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError, type CollectionIndexes } from '../db/mongo';
import { KeyedBatches } from '../keyed-batches';
import { KeyedQueue } from '../keyed-queue';

/** Atomic counters, one document per (account, action, window), addressed by `_id`. */
export interface CounterStore {
  /** Adds one if the count is below `limit` and returns the new count; null (nothing added) if not. */
  tryIncrement(id: string, limit: number): Promise<number | null>;
  decrement(id: string): Promise<void>;
  read(id: string): Promise<number>;
}

interface CounterDoc {
  _id: string;
  count: number;
}

export const countersIndexes: CollectionIndexes = { collection: 'meter_counters', indexes: [] };

/**
 * Increments are conditional upserts that match only while the count leaves room: at the limit the
 * upsert tries to insert a second document with the same `_id`, which the unique `_id` refuses. On
 * MongoDB the update is atomic, so callers on any number of replicas never push a count past its
 * limit. Increments of one counter that arrive while one is in flight are combined into the next
 * single update (`$inc` by how many are waiting), so a busy account costs about one write per
 * round trip, not one per request. FerretDB 1.24 applies updates as read-modify-write (concurrent
 * `$inc`s get lost), which this one-at-a-time flow per counter also makes exact, for a single API
 * process, as the development stack runs.
 */
export class MongoCounterStore implements CounterStore {
  private readonly counters: Collection<CounterDoc>;
  private readonly queue = new KeyedQueue();
  private readonly increments = new KeyedBatches<number, number | null>(
    (id, limits) => this.admit(id, limits),
    this.queue,
  );

  constructor(db: Db) {
    this.counters = db.collection<CounterDoc>(countersIndexes.collection);
  }

  tryIncrement(id: string, limit: number): Promise<number | null> {
    return this.increments.submit(id, limit);
  }

  /** Serves everyone waiting on this counter with one update (two when the limit is near). */
  private async admit(id: string, limits: number[]): Promise<(number | null)[]> {
    const limit = Math.min(...limits);
    const first = await this.add(id, limits.length, limit);
    return limits.map((_, i) => (first !== null && first + i <= limit ? first + i : null));
  }

  /** Adds up to `wanted`, never past `limit`; returns the count the first addition reached. */
  private async add(id: string, wanted: number, limit: number): Promise<number | null> {
    const all = await this.incrementIfRoom(id, wanted, limit);
    if (all !== null) return all - wanted + 1;
    const current = await this.read(id);
    const room = Math.min(wanted, limit - current);
    if (room <= 0) return null;
    const some = await this.incrementIfRoom(id, room, limit);
    return some === null ? null : some - room + 1;
  }

  private async incrementIfRoom(id: string, by: number, limit: number): Promise<number | null> {
    if (limit - by < 0) return null;
    try {
      const doc = await this.counters.findOneAndUpdate(
        { _id: id, count: { $lte: limit - by } },
        { $inc: { count: by } },
        { upsert: true, returnDocument: 'after' },
      );
      return doc?.count ?? null;
    } catch (err) {
      if (isDuplicateKeyError(err)) return null;
      throw err;
    }
  }

  async decrement(id: string): Promise<void> {
    await this.queue.run(id, () =>
      this.counters.updateOne({ _id: id, count: { $gt: 0 } }, { $inc: { count: -1 } }),
    );
  }

  async read(id: string): Promise<number> {
    return (await this.counters.findOne({ _id: id }))?.count ?? 0;
  }
}
