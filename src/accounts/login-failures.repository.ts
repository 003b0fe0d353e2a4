import type { Collection, Db } from 'mongodb';
import type { CollectionIndexes } from '../db/mongo';

/** Failed sign-ins of one account name or one source address, and how long it is held back. */
export interface FailureStreak {
  failures: number;
  lastFailureAt: Date;
  blockedUntil?: Date;
}

type FailureDoc = FailureStreak & { _id: string };

/** Read and written by `_id` only (`account:<digest>`, `source:<address>`): no further index. */
export const loginFailuresIndexes: CollectionIndexes = {
  collection: 'login_failures',
  indexes: [],
};

export class LoginFailuresRepository {
  private readonly streaks: Collection<FailureDoc>;

  constructor(db: Db) {
    this.streaks = db.collection<FailureDoc>(loginFailuresIndexes.collection);
  }

  async find(key: string): Promise<FailureStreak | null> {
    return this.streaks.findOne({ _id: key });
  }

  /**
   * Counts one more failure (a streak quiet since `forgetBefore` starts again at one) and returns
   * the streak. Concurrent failures all count: the update is atomic on the one document.
   */
  async addFailure(key: string, now: Date, forgetBefore: Date): Promise<FailureStreak> {
    await this.streaks.updateOne(
      { _id: key, lastFailureAt: { $lte: forgetBefore } },
      { $set: { failures: 0 }, $unset: { blockedUntil: '' } },
    );
    const doc = await this.streaks.findOneAndUpdate(
      { _id: key },
      { $inc: { failures: 1 }, $set: { lastFailureAt: now } },
      { upsert: true, returnDocument: 'after' },
    );
    return doc ?? { failures: 1, lastFailureAt: now };
  }

  /** Never shortens a block another request already set. */
  async blockUntil(key: string, until: Date): Promise<void> {
    await this.streaks.updateOne({ _id: key }, { $max: { blockedUntil: until } });
  }

  async clear(key: string): Promise<void> {
    await this.streaks.deleteOne({ _id: key });
  }
}
