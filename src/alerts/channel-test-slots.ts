import { setTimeout as sleep } from 'node:timers/promises';
import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError, type CollectionIndexes } from '../db/mongo';

interface SlotDoc {
  _id: string;
  holder: string;
  expiresAt: Date;
}

export const testSlotsIndexes: CollectionIndexes = {
  collection: 'channel_test_slots',
  indexes: [],
};

/** How long a channel test waits for its turn before it is refused with 429. */
export const CHANNEL_TEST_WAIT_MS = 10_000;
const POLL_MS = 200;
/** A slot left by a crashed replica frees itself after this; a test ends well within it. */
const LEASE_MS = 2 * 60_000;

/**
 * The channel-test concurrency limit, shared by every API replica: `size` slot documents whose
 * unique `_id`s make each claim atomic. A test waits up to CHANNEL_TEST_WAIT_MS for a free slot.
 */
export class ChannelTestSlots {
  private readonly slots: Collection<SlotDoc>;

  constructor(
    db: Db,
    private readonly size: number,
  ) {
    this.slots = db.collection<SlotDoc>(testSlotsIndexes.collection);
  }

  /** A release function, or null when no slot came free in time. */
  async acquire(holder: string): Promise<(() => Promise<void>) | null> {
    const deadline = Date.now() + CHANNEL_TEST_WAIT_MS;
    for (;;) {
      for (let n = 0; n < this.size; n++) {
        const id = `slot:${n}`;
        if (await this.claim(id, holder)) {
          return async () => {
            await this.slots.deleteOne({ _id: id, holder });
          };
        }
      }
      if (Date.now() + POLL_MS > deadline) return null;
      await sleep(POLL_MS);
    }
  }

  private async claim(id: string, holder: string): Promise<boolean> {
    await this.slots.deleteOne({ _id: id, expiresAt: { $lt: new Date() } });
    try {
      await this.slots.insertOne({ _id: id, holder, expiresAt: new Date(Date.now() + LEASE_MS) });
      return true;
    } catch (err) {
      if (isDuplicateKeyError(err)) return false;
      throw err;
    }
  }
}
