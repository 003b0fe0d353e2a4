import type { Collection, Db, Filter } from 'mongodb';
import type { CollectionIndexes } from '../db/mongo';
import { DataKeys, type StoredOpening } from './data-keys';
import { withOpenings, type Opening } from './personal-fields';
import { SEAL_ALGORITHM, type JsonObject } from './seal';

/** A record as stored. `contentHash` is absent only on records written before sealing existed. */
export interface EvidenceRecord {
  id: string;
  accountId: string;
  seq: number;
  kind: string;
  sealedAt: Date;
  prevHash: string | null;
  /** The predecessor's log id: not sealed (prevHash is), a pointer so checks read by `_id`. */
  prevLogId: string | null;
  /** As sealed: personal values are salted digests; `personal` holds them, outside the hash. */
  data: JsonObject;
  /** The personal values, each encrypted under its subject's data key; erasure removes them. */
  personal?: StoredOpening[];
  contentHash?: string;
  algorithm?: typeof SEAL_ALGORITHM;
  /** The record's index in the Merkle log, on records as the store answers a write (not stored). */
  leafIndex?: number;
}

export interface EvidencePage {
  records: EvidenceRecord[];
  nextBefore: number | null;
}

/** An owned read's answer: the record, one another account owns, or none with that id. */
export type Owned<T> = T | 'another_account' | null;

export type EvidenceDoc = Omit<EvidenceRecord, 'id'> & { _id: string };

/** The newest sequence number, hash and log id each account's chain has reached. */
export interface ChainHeadDoc {
  _id: string;
  seq: number;
  hash: string;
  logId: string;
}

export const evidenceIndexes: CollectionIndexes = {
  collection: 'evidence',
  indexes: [
    { key: { accountId: 1, seq: 1 }, name: 'account_seq_unique', unique: true },
    // The public hash check's lookup.
    { key: { contentHash: 1 }, name: 'content_hash' },
    // An erasure's lookup of the values it is the subject of in other accounts' logs.
    { key: { 'personal.subject': 1 }, name: 'personal_subject', sparse: true },
    // A replayed tripwire hit's lookup of the record that sealed it, if one did (tripwires.ts).
    { key: { 'data.hits.hit_id': 1 }, name: 'sealed_hit', sparse: true },
  ],
};

export const chainHeadsIndexes: CollectionIndexes = { collection: 'evidence_heads', indexes: [] };

export function toRecord({ _id, ...rest }: EvidenceDoc): EvidenceRecord {
  return { id: _id, ...rest };
}

/**
 * Reads of the evidence log, and its removals: records are appended only by EvidenceStore and
 * their sealed fields never change; the only delete is the forced removal of a honeypot trap's
 * hits or a rag document's leak records, which only a console session may ask for
 * (evidence-protection.ts), and the only update an erasure's removal of personal values.
 * Single-record reads go by `_id`; range reads (export, chain check, trail) use the
 * (account, sequence) index.
 */
export class EvidenceRepository {
  private readonly records: Collection<EvidenceDoc>;
  private readonly heads: Collection<ChainHeadDoc>;

  constructor(
    db: Db,
    private readonly keys = new DataKeys(db),
  ) {
    this.records = db.collection<EvidenceDoc>(evidenceIndexes.collection);
    this.heads = db.collection<ChainHeadDoc>(chainHeadsIndexes.collection);
  }

  /** The record's personal values with their salts, while their keys exist. */
  openings(record: EvidenceRecord): Promise<Opening[]> {
    return this.keys.open(record.id, record.personal);
  }

  /** The record as its owner reads it (personal values in place): for display, not for hashing. */
  async readable(record: EvidenceRecord): Promise<EvidenceRecord> {
    if (!record.personal?.length) return record;
    return { ...record, data: withOpenings(record.data, await this.openings(record)) };
  }

  /**
   * The account's record by log id; `'another_account'` when the id exists under another account
   * (the caller answers 403 rather than 404), and none of that record's content leaves here.
   */
  async findOwned(accountId: string, logId: string): Promise<Owned<EvidenceRecord>> {
    const record = await this.byLogId(logId);
    if (!record) return null;
    return record.accountId === accountId ? record : 'another_account';
  }

  /**
   * Unscoped by design: the public hash check (`GET /api/verify/{hash}`) answers anyone, with no
   * account; its answer carries no content, owner or id (EvidenceService.publicCheck).
   */
  async findByHash(contentHash: string): Promise<EvidenceRecord | null> {
    const doc = await this.records.findOne({ contentHash });
    return doc && toRecord(doc);
  }

  async chainHead(accountId: string): Promise<ChainHeadDoc | null> {
    return this.heads.findOne({ _id: accountId });
  }

  /** Oldest first, streamed: memory stays flat however long the log is. `upToSeq` cuts it. */
  streamAscending(accountId: string, upToSeq?: number) {
    const filter: Filter<EvidenceDoc> = { accountId };
    if (upToSeq !== undefined) filter.seq = { $lte: upToSeq };
    return this.records.find(filter).sort({ seq: 1 }).batchSize(500).map(toRecord);
  }

  countUpTo(accountId: string, seq: number): Promise<number> {
    return this.records.countDocuments({ accountId, seq: { $lte: seq } });
  }

  /**
   * Erasure (privacy-erase.ts): the encrypted personal values of the account, in its own log and
   * wherever it is the subject in another's, are removed. Sealed fields are never touched, so
   * every hash still holds; the values were unreadable already once the account's key was gone.
   */
  async forgetPersonal(accountId: string): Promise<void> {
    await this.records.updateMany(
      { accountId, personal: { $exists: true } },
      { $unset: { personal: '' } },
    );
    await this.records.updateMany(
      { 'personal.subject': accountId },
      { $pull: { personal: { subject: accountId } } },
    );
  }

  /** Forced removal (see above). */
  async removeForcibly(accountId: string, logIds: string[]): Promise<number> {
    return (await this.records.deleteMany({ _id: { $in: logIds }, accountId })).deletedCount;
  }

  private async byLogId(logId: string): Promise<EvidenceRecord | null> {
    const doc = await this.records.findOne({ _id: logId });
    return doc && toRecord(doc);
  }

  /** One page, newest first; `nextBefore` is the `seq` to continue below, null on the last page. */
  async pageNewestFirst(
    accountId: string,
    options: { kinds?: readonly string[]; limit: number; beforeSeq?: number },
  ): Promise<EvidencePage> {
    const filter: Filter<EvidenceDoc> = { accountId };
    if (options.kinds) filter.kind = { $in: [...options.kinds] };
    if (options.beforeSeq !== undefined) filter.seq = { $lt: options.beforeSeq };
    // One more than the page, to know whether another follows without counting.
    const docs = await this.records
      .find(filter)
      .sort({ seq: -1 })
      .limit(options.limit + 1)
      .toArray();
    const records = docs.slice(0, options.limit).map(toRecord);
    return { records, nextBefore: docs.length > options.limit ? records.at(-1)!.seq : null };
  }
}
