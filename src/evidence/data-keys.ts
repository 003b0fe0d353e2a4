import {
  createCipheriv,
  createDecipheriv,
  createSecretKey,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { Binary, type Collection, type Db } from 'mongodb';
import { isDuplicateKeyError, journaled, type CollectionIndexes } from '../db/mongo';
import { pooledRandomBytes } from '../random-bytes';
import type { Opening, SubjectOpening } from './personal-fields';

/** An opening as stored beside its record: encrypted under its subject's data key. */
export interface StoredOpening {
  path: string;
  /** The account whose key encrypts it (whose personal data it is). */
  subject: string;
  /** base64 of IV (12 bytes) ‖ AES-256-GCM ciphertext ‖ tag (16 bytes). */
  box: string;
}

/** One account's data key; `key` is gone (and `destroyedAt` set) once the account is erased. */
interface DataKeyDoc {
  _id: string;
  key?: Binary;
  createdAt: Date;
  destroyedAt?: Date;
}

export const dataKeysIndexes: CollectionIndexes = { collection: 'account_data_keys', indexes: [] };

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** How long a replica trusts the key it read: an erasure elsewhere is seen within this. */
const CACHE_MS = 30_000;

/**
 * Per-account AES-256-GCM keys for the personal values of sealed evidence (personal-fields.ts).
 * A key is made on the account's first personal value; destroying it is the erasure of every
 * value sealed under it (crypto-shredding). A destroyed key is never made again, so a value sealed
 * for an erased account afterwards is dropped and only its digest stays.
 */
export class DataKeys {
  private readonly keys: Collection<DataKeyDoc>;
  /**
   * Keys as key objects: a cipher made from raw bytes builds one inside each time (about 15 µs,
   * two or three per sealed hit).
   */
  private readonly cache = new LRUCache<string, { key: KeyObject | null }>({
    max: 10_000,
    ttl: CACHE_MS,
  });

  constructor(db: Db) {
    // A key is on disk before anything is encrypted under it.
    this.keys = journaled(db).collection<DataKeyDoc>(dataKeysIndexes.collection);
  }

  /** The openings encrypted for storage; those whose subject was erased are left out. */
  async seal(logId: string, openings: readonly SubjectOpening[]): Promise<StoredOpening[]> {
    const stored: StoredOpening[] = [];
    for (const { path, subject, salt, value } of openings) {
      const key = await this.keyFor(subject, true);
      if (!key) continue;
      const iv = pooledRandomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(aad(logId, path));
      const plain = Buffer.from(JSON.stringify({ salt, value }));
      const box = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
      stored.push({ path, subject, box: box.toString('base64') });
    }
    return stored;
  }

  /** The openings whose key still exists, decrypted. */
  async open(logId: string, stored: readonly StoredOpening[] = []): Promise<Opening[]> {
    const opened: Opening[] = [];
    for (const { path, subject, box } of stored) {
      const key = await this.keyFor(subject, false);
      if (!key) continue;
      const bytes = Buffer.from(box, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES))
        .setAAD(aad(logId, path))
        .setAuthTag(bytes.subarray(-TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(bytes.subarray(IV_BYTES, -TAG_BYTES)),
        decipher.final(),
      ]);
      const { salt, value } = JSON.parse(plain.toString()) as { salt: string; value: unknown };
      opened.push({ path, salt, value });
    }
    return opened;
  }

  /** Destroys the account's key for good (idempotent): what it encrypted is unreadable from now. */
  async destroy(accountId: string, now: Date): Promise<void> {
    await this.keys.updateOne(
      { _id: accountId },
      { $unset: { key: '' }, $set: { destroyedAt: now }, $setOnInsert: { createdAt: now } },
      { upsert: true },
    );
    this.cache.set(accountId, { key: null });
  }

  private async keyFor(accountId: string, create: boolean): Promise<KeyObject | null> {
    const cached = this.cache.get(accountId);
    if (cached) return cached.key;
    let doc = await this.keys.findOne({ _id: accountId });
    if (!doc && !create) return null;
    if (!doc) doc = await this.created(accountId);
    const key = doc.key ? createSecretKey(doc.key.buffer) : null;
    this.cache.set(accountId, { key });
    return key;
  }

  private async created(accountId: string): Promise<DataKeyDoc> {
    const doc: DataKeyDoc = {
      _id: accountId,
      key: new Binary(randomBytes(32)),
      createdAt: new Date(),
    };
    try {
      await this.keys.insertOne(doc);
      return doc;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      return (await this.keys.findOne({ _id: accountId }))!; // another writer made it first
    }
  }
}

/** Binds a box to its record and field, so it cannot be moved to another one. */
const aad = (logId: string, path: string) => Buffer.from(`${logId}\n${path}`);
