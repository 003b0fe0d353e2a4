import { MongoServerError, type Collection, type Db } from 'mongodb';
import type { CollectionIndexes } from '../db/mongo';
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

const DUPLICATE_KEY = 11000;

export class MongoCounterStore implements CounterStore {
  private readonly counters: Collection<CounterDoc>;
  private readonly queue = new KeyedQueue();

  constructor(db: Db) {
    this.counters = db.collection<CounterDoc>(countersIndexes.collection);
  }

  /**
   * One conditional upsert: it matches only while `count < limit`. At the limit the upsert tries
   * to insert a second document with the same `_id`, which the unique `_id` refuses. On MongoDB the
   * update is atomic, so callers on any number of replicas never push a count past its limit.
   * FerretDB 1.24 applies updates as read-modify-write (concurrent `$inc`s are lost), so this
   * process also runs the operations on one counter one at a time: exact on FerretDB for a single
   * API process, which is how the development stack runs.
   */
  tryIncrement(id: string, limit: number): Promise<number | null> {
    return this.queue.run(id, () => this.conditionalIncrement(id, limit));
  }

  private async conditionalIncrement(id: string, limit: number): Promise<number | null> {
    if (limit <= 0) return null;
    try {
      const doc = await this.counters.findOneAndUpdate(
        { _id: id, count: { $lt: limit } },
        { $inc: { count: 1 } },
        { upsert: true, returnDocument: 'after' },
      );
      return doc?.count ?? null;
    } catch (err) {
      if (err instanceof MongoServerError && err.code === DUPLICATE_KEY) return null;
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
