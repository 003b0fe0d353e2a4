import { LRUCache } from 'lru-cache';
import { MongoBulkWriteError, type Collection, type Db } from 'mongodb';
import type { Clock } from '../clock';
import { isDuplicateKeyError, journaled, unjournaled } from '../db/mongo';
import { newTimeOrderedId } from '../ids';
import { KeyedBatches } from '../keyed-batches';
import { evidenceWrites } from '../metrics';
import {
  chainHeadsIndexes,
  evidenceIndexes,
  toRecord,
  type ChainHeadDoc,
  type EvidenceDoc,
  type EvidenceRecord,
} from './evidence.repository';
import { DataKeys, type StoredOpening } from './data-keys';
import { LeafLog } from './log/log-leaves';
import { commitPersonal } from './personal-fields';
import { contentHash, SEAL_ALGORITHM, toJsonObject, type JsonObject } from './seal';

export interface EvidenceInput {
  kind: string;
  data: object;
  /** Set by callers that retry: an input whose id is already stored is not written again. */
  logId?: string;
}

interface Head {
  seq: number;
  hash: string | null;
  logId: string | null;
}

interface Pending {
  logId: string;
  kind: string;
  /** As sealed: personal values replaced by their digests (personal-fields.ts). */
  data: JsonObject;
  personal: StoredOpening[];
}

const MAX_ATTEMPTS = 20;
const EMPTY_CHAIN: Head = { seq: 0, hash: null, logId: null };

/**
 * The one way evidence is written: sealed, chained, append-only. Each account's records form a
 * chain (sequence 1, 2, 3, … each carrying the previous record's hash). The unique index on
 * (account, sequence) is the arbiter between writers on different replicas, so no sequence number
 * is ever taken twice or skipped; within this process, appends for one account are group-committed:
 * those that arrive while a write runs go together in the next one (one insertMany). The chain
 * head (`evidence_heads`, by `_id`) says where to continue, and this process remembers the heads
 * it moved; when either lags (another replica appended, or a crash came before the head moved)
 * the insert collides and the true head is read instead.
 *
 * Every sealed record also becomes a leaf of the deployment-wide Merkle log (log-leaves.ts) before
 * the chain head moves past it, so a cut at the head finds every record before it in the log.
 *
 * An append syncs once: the records and leaves are written without waiting for the disk, and the
 * chain head's write, last, waits for the journal (`j: true`), which makes them durable with it
 * (a synced write carries every write the server took before it: MongoDB's journal is written in
 * order, and the embedded server syncs its whole file). Only then is the append acknowledged and
 * this process's memory of the head moved; any error forgets it, so the next append starts from
 * what the database kept (a restarted database may have lost the unsynced writes).
 */
export class EvidenceStore {
  private readonly records: Collection<EvidenceDoc>;
  private readonly heads: Collection<ChainHeadDoc>;
  /** The head each account's chain reached in this process's last write for it. */
  private readonly lastHeads = new LRUCache<string, Head>({ max: 10_000 });
  private readonly batches = new KeyedBatches<Pending[], EvidenceRecord[]>((accountId, groups) =>
    this.writeGroups(accountId, groups),
  );

  constructor(
    db: Db,
    private readonly clock: Clock,
    /** The Merkle log; the benchmark's baseline passes one that appends nothing. */
    private readonly log: Pick<LeafLog, 'append'> = new LeafLog(db),
    private readonly keys = new DataKeys(db),
  ) {
    this.records = unjournaled(db).collection<EvidenceDoc>(evidenceIndexes.collection);
    // The one synced write of an append (see above).
    this.heads = journaled(db).collection<ChainHeadDoc>(chainHeadsIndexes.collection);
  }

  async append(accountId: string, input: EvidenceInput): Promise<EvidenceRecord> {
    const [record] = await this.appendMany(accountId, [input]);
    return record!;
  }

  /** Appends in order; the records come back sealed, with their sequence numbers. */
  async appendMany(accountId: string, inputs: readonly EvidenceInput[]): Promise<EvidenceRecord[]> {
    if (!inputs.length) return [];
    // Converted here, so an input that is not JSON fails alone rather than its whole batch.
    const pending = await Promise.all(
      inputs.map(async (input): Promise<Pending> => {
        const logId = input.logId ?? newTimeOrderedId('evd');
        const { sealed, openings } = commitPersonal(
          accountId,
          input.kind,
          toJsonObject(input.data),
        );
        const personal = await this.keys.seal(logId, openings);
        return { logId, kind: input.kind, data: sealed, personal };
      }),
    );
    return this.batches.submit(accountId, pending);
  }

  /** The records that seal these tripwire hits (`data.hits`), by hit id: those sealed already. */
  async recordsOfHits(hitIds: readonly string[]): Promise<Map<string, string>> {
    const wanted = new Set(hitIds);
    const docs = await this.records
      .find({ 'data.hits.hit_id': { $in: [...wanted] } }, { projection: { 'data.hits': 1 } })
      .toArray();
    const sealed = new Map<string, string>();
    for (const doc of docs) {
      for (const { hit_id } of (doc.data as { hits: { hit_id: string }[] }).hits) {
        if (wanted.has(hit_id)) sealed.set(hit_id, doc._id);
      }
    }
    return sealed;
  }

  /** One write for every caller's inputs; each caller gets its own records back. */
  private async writeGroups(accountId: string, groups: Pending[][]): Promise<EvidenceRecord[][]> {
    const byLogId = new Map((await this.write(accountId, groups.flat())).map((r) => [r.id, r]));
    return groups.map((group) => group.map((p) => byLogId.get(p.logId)!));
  }

  private async write(accountId: string, inputs: Pending[]): Promise<EvidenceRecord[]> {
    try {
      return await this.writeChained(accountId, inputs);
    } catch (err) {
      this.lastHeads.delete(accountId);
      throw err;
    }
  }

  private async writeChained(accountId: string, inputs: Pending[]): Promise<EvidenceRecord[]> {
    const sealedAt = this.clock();
    let pending = inputs;
    const written: EvidenceRecord[] = [];
    let head = this.lastHeads.get(accountId) ?? (await this.recordedHead(accountId));
    for (let attempt = 1; pending.length; attempt++) {
      const docs = chain(accountId, head, pending, sealedAt);
      try {
        await this.records.insertMany(docs, { ordered: true });
        written.push(...docs.map(toRecord));
        break;
      } catch (err) {
        if (!isDuplicateKeyError(err) || attempt === MAX_ATTEMPTS) throw err;
        // Keep what went in: the ordered prefix, and records an earlier try already stored.
        const inserted = err instanceof MongoBulkWriteError ? err.insertedCount : 0;
        written.push(...docs.slice(0, inserted).map(toRecord));
        const rest = pending.slice(inserted);
        const earlier = await this.records
          .find({ _id: { $in: rest.map((p) => p.logId) } })
          .sort({ seq: 1 })
          .toArray();
        written.push(...earlier.map(toRecord));
        const stored = new Set(earlier.map((d) => d._id));
        pending = rest.filter((p) => !stored.has(p.logId));
        head = await this.actualHead(accountId);
      }
    }
    // The head moves only once the leaves are in.
    const leafIndexes = await this.log.append(
      written.map((r) => ({ logId: r.id, accountId, seq: r.seq, contentHash: r.contentHash! })),
      () => this.moveHead(accountId, written),
    );
    written.forEach((record, i) => (record.leafIndex = leafIndexes[i]));
    for (const record of written) evidenceWrites.inc({ kind: record.kind });
    return written;
  }

  private async recordedHead(accountId: string): Promise<Head> {
    const head = await this.heads.findOne({ _id: accountId });
    return head ? { seq: head.seq, hash: head.hash, logId: head.logId } : EMPTY_CHAIN;
  }

  /** The newest record itself: a range read, needed only after a collision. */
  private async actualHead(accountId: string): Promise<Head> {
    const latest = await this.records.findOne({ accountId }, { sort: { seq: -1 } });
    return latest
      ? { seq: latest.seq, hash: latest.contentHash ?? null, logId: latest._id }
      : EMPTY_CHAIN;
  }

  /**
   * Last: the chain head, never moved back (idempotent), in the synced write that makes the whole
   * append durable. `updateMany` (it matches one head at most) because the driver never retries it:
   * a retry could land on a restarted database that lost this append's unsynced writes, and sync
   * nothing of them.
   */
  private async moveHead(accountId: string, written: EvidenceRecord[]): Promise<void> {
    const last = written.at(-1)!;
    const head = { seq: last.seq, hash: last.contentHash!, logId: last.id };
    const moved = await this.heads.updateMany(
      { _id: accountId, seq: { $lt: last.seq } },
      { $set: head },
    );
    if (!moved.matchedCount) {
      try {
        await this.heads.insertOne({ _id: accountId, ...head });
      } catch (err) {
        if (!isDuplicateKeyError(err)) throw err; // a newer head is already recorded
      }
    }
    this.lastHeads.set(accountId, head);
  }
}

function chain(accountId: string, head: Head, pending: Pending[], sealedAt: Date): EvidenceDoc[] {
  let previous = head;
  return pending.map(({ logId, kind, data, personal }) => {
    const seq = previous.seq + 1;
    const prevHash = previous.hash;
    const hash = contentHash({ logId, accountId, seq, kind, sealedAt, prevHash, data });
    const doc: EvidenceDoc = {
      _id: logId,
      accountId,
      seq,
      kind,
      sealedAt,
      prevHash,
      prevLogId: previous.logId,
      data,
      contentHash: hash,
      algorithm: SEAL_ALGORITHM,
      ...(personal.length && { personal }),
    };
    previous = { seq, hash, logId };
    return doc;
  });
}
