import { z } from 'zod';
import { DomainError } from '../errors';
import type { EvidenceRecord, EvidenceRepository } from './evidence.repository';
import { ChainWalk, chainFindingsView } from './chain-walk';
import { exportedRecord } from './evidence-record.view';
import { inclusionView, type EvidenceLog } from './log/evidence-log';
import { inclusionPromiseView } from './log/inclusion-promise';
import { contentHash, SEAL_ALGORITHM } from './seal';

/** How other answers point at the sealed record behind them. */
export const evidenceRefView = z.object({ log_id: z.string(), content_hash: z.string() });

/** A record sealed by this very request: its reference and the log's signed inclusion promise. */
export const sealedRefView = evidenceRefView.extend({ promise: inclusionPromiseView });

export const recordVerificationView = z
  .object({
    log_id: z.string(),
    seq: z.number().int(),
    kind: z.string(),
    /** Content and link both check out. */
    verified: z.boolean(),
    /** The stored fields no longer produce the stored hash. */
    tampered: z.boolean(),
    match: z.boolean(),
    stored_hash: z.string().nullable(),
    recomputed_hash: z.string(),
    sealed: z.boolean(),
    sealed_at: z.iso.datetime(),
    algorithm: z.literal(SEAL_ALGORITHM).nullable(),
    link: z.object({
      /** The record carries its predecessor's stored hash (the first record carries none). */
      holds: z.boolean(),
      prev_hash: z.string().nullable(),
      predecessor_hash: z.string().nullable(),
    }),
    leaf_index: z.number().int().nullable(),
    /** The log's signed promise of the record's leaf (null only if it never reached the log). */
    promise: inclusionPromiseView.nullable(),
    /** Against a signed checkpoint that covers the record (one is signed if none does yet). */
    inclusion: inclusionView.nullable(),
  })
  .meta({ id: 'RecordVerification' });
export type RecordVerification = z.output<typeof recordVerificationView>;

export const chainReportView = chainFindingsView
  .extend({
    /** The chain head the check was cut at: records appended meanwhile are left for the next. */
    head: z.object({ seq: z.number().int(), hash: z.string() }).nullable(),
  })
  .meta({ id: 'ChainReport' });
export type ChainReport = z.output<typeof chainReportView>;

/** The public check: never content, owner or ids; the proof reveals only a position in the log. */
export const hashCheckView = z
  .object({
    content_hash: z.string(),
    exists: z.literal(true),
    intact: z.boolean(),
    sealed_at: z.iso.datetime(),
    algorithm: z.literal(SEAL_ALGORITHM),
    /** The record's place in the deployment's Merkle log (null only if it never reached it). */
    leaf_index: z.number().int().nullable(),
    /** The log's signed promise of the record's leaf (null only if it never reached the log). */
    promise: inclusionPromiseView.nullable(),
    /** Against the latest signed checkpoint; null until the next checkpoint covers the record. */
    inclusion: inclusionView.nullable(),
  })
  .meta({ id: 'HashCheck' });

export function recomputeHash(record: EvidenceRecord): string {
  return contentHash({ ...record, logId: record.id });
}

export class EvidenceService {
  constructor(
    private readonly evidence: EvidenceRepository,
    private readonly log: EvidenceLog,
  ) {}

  async ownedRecord(accountId: string, logId: string): Promise<EvidenceRecord> {
    const record = await this.evidence.findOwned(accountId, logId);
    if (!record) throw new DomainError('not_found', `No evidence record with id ${logId}`);
    if (record === 'another_account') {
      throw new DomainError('forbidden', `Evidence record ${logId} belongs to another account`);
    }
    return record;
  }

  async verify(accountId: string, logId: string): Promise<RecordVerification> {
    const record = await this.ownedRecord(accountId, logId);
    const recomputed = recomputeHash(record);
    const sealed = record.contentHash !== undefined;
    const match = sealed && recomputed === record.contentHash;
    const predecessor = record.prevLogId
      ? await this.evidence.findOwned(accountId, record.prevLogId)
      : null;
    const isPredecessor = typeof predecessor === 'object' && predecessor?.seq === record.seq - 1;
    const predecessorHash = isPredecessor ? (predecessor.contentHash ?? null) : null;
    const holds = record.seq === 1 ? record.prevHash === null : predecessorHash === record.prevHash;
    const { leafIndex, inclusion } = await this.log.inclusionOf(record.id, 'issue');
    return {
      log_id: record.id,
      seq: record.seq,
      kind: record.kind,
      verified: match && holds,
      tampered: sealed && !match,
      match,
      stored_hash: record.contentHash ?? null,
      recomputed_hash: recomputed,
      sealed,
      sealed_at: record.sealedAt.toISOString(),
      algorithm: record.algorithm ?? null,
      link: { holds, prev_hash: record.prevHash, predecessor_hash: predecessorHash },
      leaf_index: leafIndex,
      promise: this.promiseOf(record, leafIndex),
      inclusion,
    };
  }

  /** For anyone: whether a sealed record with this hash exists and is intact. Nothing else. */
  async publicCheck(hash: string): Promise<z.output<typeof hashCheckView>> {
    const record = await this.evidence.findByHash(hash);
    if (!record) throw new DomainError('not_found', 'No sealed record has this content hash');
    const { leafIndex, inclusion } = await this.log.inclusionOf(record.id, 'latest');
    return {
      content_hash: hash,
      exists: true,
      intact: recomputeHash(record) === hash,
      sealed_at: record.sealedAt.toISOString(),
      algorithm: record.algorithm ?? SEAL_ALGORITHM,
      leaf_index: leafIndex,
      promise: this.promiseOf(record, leafIndex),
      inclusion,
    };
  }

  private promiseOf(record: EvidenceRecord, leafIndex: number | null) {
    return leafIndex === null || !record.contentHash ? null : this.log.promise(record, leafIndex);
  }

  /**
   * Walks the chain oldest first up to the head read at the start, so appends made meanwhile are
   * not mistaken for gaps; gaps a sealed removal explains are listed apart from missing ones.
   */
  async checkChain(accountId: string): Promise<ChainReport> {
    const head = await this.evidence.chainHead(accountId);
    const walk = new ChainWalk(accountId);
    if (head) {
      for await (const record of this.evidence.streamAscending(accountId, head.seq)) {
        walk.add(exportedRecord(record));
      }
    }
    return { ...walk.finish(head?.seq ?? null), head: head && { seq: head.seq, hash: head.hash } };
  }
}
