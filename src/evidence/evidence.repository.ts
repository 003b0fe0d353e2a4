import type { Collection, Db, Filter } from 'mongodb';
import type { CollectionIndexes } from '../db/mongo';
import { SEAL_ALGORITHM, type JsonObject } from './seal';

/** A record as stored. `contentHash` is absent only on records written before sealing existed. */
export interface EvidenceRecord {
  id: string;
  accountId: string;
  seq: number;
  kind: string;
  sealedAt: Date;
  prevHash: string | null;
  data: JsonObject;
  contentHash?: string;
  algorithm?: typeof SEAL_ALGORITHM;
}

export type EvidenceDoc = Omit<EvidenceRecord, 'id'> & { _id: string };

/** The newest sequence number and hash each account's chain has reached. */
export interface ChainHeadDoc {
  _id: string;
  seq: number;
  hash: string;
}

export const evidenceIndexes: CollectionIndexes = {
  collection: 'evidence',
  indexes: [
    { key: { accountId: 1, seq: 1 }, name: 'account_seq_unique', unique: true },
    { key: { contentHash: 1 }, name: 'content_hash' },
  ],
};

export const chainHeadsIndexes: CollectionIndexes = { collection: 'evidence_heads', indexes: [] };

export function toRecord({ _id, ...rest }: EvidenceDoc): EvidenceRecord {
  return { id: _id, ...rest };
}

/**
 * Reads of the evidence log. There is no update or delete here, or anywhere: records are only
 * ever appended (by EvidenceStore) and read.
 */
export class EvidenceRepository {
  readonly records: Collection<EvidenceDoc>;
  readonly heads: Collection<ChainHeadDoc>;

  constructor(db: Db) {
    this.records = db.collection<EvidenceDoc>(evidenceIndexes.collection);
    this.heads = db.collection<ChainHeadDoc>(chainHeadsIndexes.collection);
  }

  /** Any account's record: callers decide between 403 and 404 with its `accountId`. */
  async findByLogId(logId: string): Promise<EvidenceRecord | null> {
    const doc = await this.records.findOne({ _id: logId });
    return doc && toRecord(doc);
  }

  async findBySeq(accountId: string, seq: number): Promise<EvidenceRecord | null> {
    const doc = await this.records.findOne({ accountId, seq });
    return doc && toRecord(doc);
  }

  async findByHash(contentHash: string): Promise<EvidenceRecord | null> {
    const doc = await this.records.findOne({ contentHash });
    return doc && toRecord(doc);
  }

  async latest(accountId: string): Promise<EvidenceRecord | null> {
    const doc = await this.records.findOne({ accountId }, { sort: { seq: -1 } });
    return doc && toRecord(doc);
  }

  async earliest(accountId: string): Promise<EvidenceRecord | null> {
    const doc = await this.records.findOne({ accountId }, { sort: { seq: 1 } });
    return doc && toRecord(doc);
  }

  async chainHead(accountId: string): Promise<ChainHeadDoc | null> {
    return this.heads.findOne({ _id: accountId });
  }

  /** Oldest first, streamed: memory stays flat however long the log is. */
  streamAscending(accountId: string, options: { kinds?: readonly string[] } = {}) {
    const filter: Filter<EvidenceDoc> = { accountId };
    if (options.kinds) filter.kind = { $in: [...options.kinds] };
    return this.records.find(filter).sort({ seq: 1 }).batchSize(500).map(toRecord);
  }

  async listNewestFirst(
    accountId: string,
    options: { kinds: readonly string[]; limit: number; beforeSeq?: number },
  ): Promise<EvidenceRecord[]> {
    const filter: Filter<EvidenceDoc> = { accountId, kind: { $in: [...options.kinds] } };
    if (options.beforeSeq !== undefined) filter.seq = { $lt: options.beforeSeq };
    const docs = await this.records.find(filter).sort({ seq: -1 }).limit(options.limit).toArray();
    return docs.map(toRecord);
  }
}
