import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError, type CollectionIndexes } from '../db/mongo';

export const MAX_ACTIVE_KEYS = 5;

export interface ApiKey {
  id: string;
  accountId: string;
  name: string;
  prefix: string;
  secretHash: string;
  scopes: string[];
  /** The place among the account's MAX_ACTIVE_KEYS this key holds while active. */
  slot: number;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** Set while an operator has the account disabled: refused like a revoked key, until re-enabled. */
  suspendedAt?: Date | null;
}

type ApiKeyDoc = Omit<ApiKey, 'id'> & { _id: string };

/** One document per occupied place, `_id` = `<accountId>:<slot>`: the unique `_id` is the lock. */
interface KeySlotDoc {
  _id: string;
  accountId: string;
  keyId: string;
  claimedAt: Date;
}

export const apiKeysIndexes: CollectionIndexes = {
  collection: 'api_keys',
  indexes: [{ key: { accountId: 1, createdAt: 1 }, name: 'account_created' }],
};

export const keySlotsIndexes: CollectionIndexes = {
  collection: 'api_key_slots',
  indexes: [{ key: { accountId: 1 }, name: 'account' }],
};

/** A slot whose key is missing this long after the claim was left by a crash mid-creation. */
const ABANDONED_CLAIM_MS = 60_000;

function toApiKey({ _id, ...rest }: ApiKeyDoc): ApiKey {
  return { id: _id, ...rest };
}

export class ApiKeysRepository {
  private readonly keys: Collection<ApiKeyDoc>;
  private readonly slots: Collection<KeySlotDoc>;

  constructor(db: Db) {
    this.keys = db.collection<ApiKeyDoc>(apiKeysIndexes.collection);
    this.slots = db.collection<KeySlotDoc>(keySlotsIndexes.collection);
  }

  /**
   * Takes a free place for a new key, or returns null when all are taken. Concurrent callers race
   * on unique `_id`s, so no more than MAX_ACTIVE_KEYS claims can ever exist for one account.
   */
  async claimSlot(accountId: string, keyId: string, now: Date): Promise<number | null> {
    for (let slot = 0; slot < MAX_ACTIVE_KEYS; slot++) {
      try {
        await this.slots.insertOne({
          _id: `${accountId}:${slot}`,
          accountId,
          keyId,
          claimedAt: now,
        });
        return slot;
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err;
      }
    }
    return null;
  }

  async releaseSlot(accountId: string, slot: number, keyId: string): Promise<void> {
    await this.slots.deleteOne({ _id: `${accountId}:${slot}`, keyId });
  }

  /** Frees places held for keys that are revoked, or were never written. Returns how many. */
  async releaseAbandonedSlots(accountId: string, now: Date): Promise<number> {
    const claims = await this.slots.find({ accountId }).toArray();
    const active = new Set(
      (
        await this.keys.find({ accountId, revokedAt: null }, { projection: { _id: 1 } }).toArray()
      ).map((k) => k._id),
    );
    let released = 0;
    for (const claim of claims) {
      const abandoned = now.getTime() - claim.claimedAt.getTime() > ABANDONED_CLAIM_MS;
      if (!active.has(claim.keyId) && abandoned) {
        released += (await this.slots.deleteOne({ _id: claim._id, keyId: claim.keyId }))
          .deletedCount;
      }
    }
    return released;
  }

  async insert(key: ApiKey): Promise<void> {
    const { id, ...rest } = key;
    await this.keys.insertOne({ _id: id, ...rest });
  }

  /** Authentication looks a key up by its public id before the account is known. */
  async findForAuthentication(keyId: string): Promise<ApiKey | null> {
    const doc = await this.keys.findOne({ _id: keyId });
    return doc && toApiKey(doc);
  }

  async listActive(accountId: string): Promise<ApiKey[]> {
    const docs = await this.keys
      .find({ accountId, revokedAt: null })
      .sort({ createdAt: 1 })
      .toArray();
    return docs.map(toApiKey);
  }

  /** Revokes once: a second call, or a key of another account, matches nothing and returns null. */
  async revoke(accountId: string, keyId: string, now: Date): Promise<ApiKey | null> {
    const doc = await this.keys.findOneAndUpdate(
      { _id: keyId, accountId, revokedAt: null },
      { $set: { revokedAt: now } },
      { returnDocument: 'after' },
    );
    return doc && toApiKey(doc);
  }

  /** Suspends (a date) or resumes (null) every active key of the account; returns how many. */
  async suspendAll(accountId: string, suspendedAt: Date | null): Promise<number> {
    const { modifiedCount } = await this.keys.updateMany(
      { accountId, revokedAt: null },
      { $set: { suspendedAt } },
    );
    return modifiedCount;
  }

  /** Moves `lastUsedAt` forward only, so replicas writing out of order never move it back. */
  async touchLastUsed(keyId: string, at: Date): Promise<void> {
    await this.keys.updateOne(
      { _id: keyId, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lt: at } }] },
      { $set: { lastUsedAt: at } },
    );
  }
}
