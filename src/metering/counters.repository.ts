import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError, type CollectionIndexes } from '../db/mongo';
import { KeyedBatches } from '../keyed-batches';

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

/** Bounds the retries of one batch when other replicas keep taking places first. */
const MAX_ATTEMPTS = 20;

export const countersIndexes: CollectionIndexes = { collection: 'meter_counters', indexes: [] };

/**
 * Increments are conditional upserts that match only while the count leaves room: at the limit the
 * upsert tries to insert a second document with the same `_id`, which the unique `_id` refuses. The
 * update is atomic, so callers on any number of replicas never push a count past its limit.
 * Increments of one counter that arrive while one is in flight are combined into the next single
 * update (`$inc` by how many are waiting), so a busy account costs about one write per round trip,
 * not one per request.
 */
export class MongoCounterStore implements CounterStore {
  private readonly counters: Collection<CounterDoc>;
  private readonly increments = new KeyedBatches<number, number | null>((id, limits) =>
    this.admit(id, limits),
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

  /**
   * Adds up to `wanted`, never past `limit`; returns the count the first addition reached. When
   * another replica took places meanwhile, the conditional update misses and the room is read
   * again, so a batch gives up only when the window is really full.
   */
  private async add(id: string, wanted: number, limit: number): Promise<number | null> {
    let room = Math.min(wanted, limit);
    for (let attempt = 0; attempt < MAX_ATTEMPTS && room > 0; attempt++) {
      const reached = await this.incrementIfRoom(id, room, limit);
      if (reached !== null) return reached - room + 1;
      room = Math.min(wanted, limit - (await this.read(id)));
    }
    return null;
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
    await this.counters.updateOne({ _id: id, count: { $gt: 0 } }, { $inc: { count: -1 } });
  }

  async read(id: string): Promise<number> {
    return (await this.counters.findOne({ _id: id }))?.count ?? 0;
  }
}
