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
/**
 * A held slot's lease, renewed every RENEW_MS while its test runs: a slot left by a process that
 * died frees itself within LEASE_MS, shorter than the wait, so a waiting test still gets it.
 */
const LEASE_MS = 6_000;
const RENEW_MS = 2_000;

/**
 * The channel-test concurrency limit of each account, shared by every API replica: `size` slot
 * documents per account whose unique `_id`s make each claim atomic, so one tenant looping tests at
 * a slow receiver makes only its own tests wait. A test waits up to CHANNEL_TEST_WAIT_MS for a
 * free slot of its account.
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
  async acquire(accountId: string, holder: string): Promise<(() => Promise<void>) | null> {
    const deadline = Date.now() + CHANNEL_TEST_WAIT_MS;
    for (;;) {
      for (let n = 0; n < this.size; n++) {
        const id = slotId(accountId, n);
        if (await this.claim(id, holder)) {
          const renewal = setInterval(() => {
            this.slots
              .updateOne({ _id: id, holder }, { $set: { expiresAt: this.leaseEnd() } })
              .catch(() => undefined); // a missed renewal is retried by the next one
          }, RENEW_MS);
          renewal.unref();
          return async () => {
            clearInterval(renewal);
            await this.slots.deleteOne({ _id: id, holder });
          };
        }
      }
      if (Date.now() + POLL_MS > deadline) return null;
      await sleep(POLL_MS);
    }
  }

  private leaseEnd(): Date {
    return new Date(Date.now() + LEASE_MS);
  }

  private async claim(id: string, holder: string): Promise<boolean> {
    await this.slots.deleteOne({ _id: id, expiresAt: { $lt: new Date() } });
    try {
      await this.slots.insertOne({ _id: id, holder, expiresAt: this.leaseEnd() });
      return true;
    } catch (err) {
      if (isDuplicateKeyError(err)) return false;
      throw err;
    }
  }
}

/** Slot `n` of an account. */
export const slotId = (accountId: string, n: number): string => `slot:${accountId}:${n}`;
