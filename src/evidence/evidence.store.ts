import { MongoBulkWriteError, MongoServerError, type Collection, type Db } from 'mongodb';
import type { Clock } from '../clock';
import { newId } from '../ids';
import {
  chainHeadsIndexes,
  evidenceIndexes,
  toRecord,
  type ChainHeadDoc,
  type EvidenceDoc,
  type EvidenceRecord,
} from './evidence.repository';
import { contentHash, SEAL_ALGORITHM, toJsonObject } from './seal';

export interface EvidenceInput {
  kind: string;
  data: object;
  /** Set by callers that retry: an input whose id is already stored is not written again. */
  logId?: string;
}

interface Head {
  seq: number;
  hash: string | null;
}

const DUPLICATE_KEY = 11000;
const MAX_ATTEMPTS = 20;

/**
 * The one way evidence is written: sealed, chained, append-only. Each account's records form a
 * chain (sequence 1, 2, 3, … each carrying the previous record's hash). The unique index on
 * (account, sequence) is the arbiter between writers on different replicas; within this process,
 * appends for one account run one batch at a time, so they rarely collide at all.
 */
export class EvidenceStore {
  private readonly records: Collection<EvidenceDoc>;
  private readonly heads: Collection<ChainHeadDoc>;
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    db: Db,
    private readonly clock: Clock,
  ) {
    this.records = db.collection<EvidenceDoc>(evidenceIndexes.collection);
    this.heads = db.collection<ChainHeadDoc>(chainHeadsIndexes.collection);
  }

  async append(accountId: string, input: EvidenceInput): Promise<EvidenceRecord> {
    const [record] = await this.appendMany(accountId, [input]);
    return record!;
  }

  /** Appends in order; the records come back sealed, with their sequence numbers. */
  appendMany(accountId: string, inputs: readonly EvidenceInput[]): Promise<EvidenceRecord[]> {
    const previous = this.queues.get(accountId) ?? Promise.resolve();
    const run = previous.then(
      () => this.write(accountId, inputs),
      () => this.write(accountId, inputs),
    );
    const settled = run.catch(() => undefined);
    this.queues.set(accountId, settled);
    void settled.then(() => {
      if (this.queues.get(accountId) === settled) this.queues.delete(accountId);
    });
    return run;
  }

  private async write(
    accountId: string,
    inputs: readonly EvidenceInput[],
  ): Promise<EvidenceRecord[]> {
    const sealedAt = this.clock();
    let pending = inputs.map((input) => ({
      logId: input.logId ?? newId('evd'),
      kind: input.kind,
      data: toJsonObject(input.data),
    }));
    const written: EvidenceRecord[] = [];
    for (let attempt = 1; pending.length; attempt++) {
      const docs = this.chain(accountId, await this.head(accountId), pending, sealedAt);
      try {
        await this.records.insertMany(docs, { ordered: true });
        written.push(...docs.map(toRecord));
        break;
      } catch (err) {
        if (!isDuplicateKey(err) || attempt === MAX_ATTEMPTS) throw err;
        // Another writer took a sequence number, or an earlier try stored part of this batch:
        // keep what is stored, re-chain the rest on the new head.
        const stored = await this.records
          .find({ _id: { $in: docs.map((d) => d._id) } })
          .sort({ seq: 1 })
          .toArray();
        written.push(...stored.map(toRecord));
        const storedIds = new Set(stored.map((d) => d._id));
        pending = pending.filter((p) => !storedIds.has(p.logId));
      }
    }
    const last = written.at(-1);
    if (last) await this.advanceHead(accountId, last.seq, last.contentHash!);
    return written;
  }

  private chain(
    accountId: string,
    head: Head,
    pending: { logId: string; kind: string; data: EvidenceDoc['data'] }[],
    sealedAt: Date,
  ): EvidenceDoc[] {
    let previous = head;
    return pending.map(({ logId, kind, data }) => {
      const seq = previous.seq + 1;
      const prevHash = previous.hash;
      const hash = contentHash({ logId, accountId, seq, kind, sealedAt, prevHash, data });
      previous = { seq, hash };
      return {
        _id: logId,
        accountId,
        seq,
        kind,
        sealedAt,
        prevHash,
        data,
        contentHash: hash,
        algorithm: SEAL_ALGORITHM,
      };
    });
  }

  private async head(accountId: string): Promise<Head> {
    const latest = await this.records.findOne(
      { accountId },
      { sort: { seq: -1 }, projection: { seq: 1, contentHash: 1 } },
    );
    return latest ? { seq: latest.seq, hash: latest.contentHash ?? null } : { seq: 0, hash: null };
  }

  /** The chain's high-water mark, kept apart so that deleting the newest records shows too. */
  private async advanceHead(accountId: string, seq: number, hash: string): Promise<void> {
    const moved = await this.heads.updateOne(
      { _id: accountId, seq: { $lt: seq } },
      { $set: { seq, hash } },
    );
    if (moved.matchedCount) return;
    try {
      await this.heads.insertOne({ _id: accountId, seq, hash });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err; // a newer head is already recorded
    }
  }
}

function isDuplicateKey(err: unknown): boolean {
  if (err instanceof MongoBulkWriteError) {
    return ([] as { code?: number }[])
      .concat(err.writeErrors)
      .some((e) => e.code === DUPLICATE_KEY);
  }
  return err instanceof MongoServerError && err.code === DUPLICATE_KEY;
}
