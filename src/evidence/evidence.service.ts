import { z } from 'zod';
import { AppError } from '../http/errors';
import type { EvidenceRecord, EvidenceRepository } from './evidence.repository';
import { contentHash, SEAL_ALGORITHM } from './seal';

/** How other answers point at the sealed record behind them. */
export const evidenceRefView = z.object({ log_id: z.string(), content_hash: z.string() });

export const recordVerificationView = z.object({
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
});
export type RecordVerification = z.output<typeof recordVerificationView>;

export const chainReportView = z.object({
  intact: z.boolean(),
  records_checked: z.number().int(),
  head: z.object({ seq: z.number().int(), hash: z.string() }).nullable(),
  first_edited: z.object({ log_id: z.string(), seq: z.number().int() }).nullable(),
  first_broken_link: z
    .object({
      log_id: z.string(),
      seq: z.number().int(),
      prev_hash: z.string().nullable(),
      predecessor_hash: z.string(),
    })
    .nullable(),
  missing_seqs: z.array(z.object({ from: z.number().int(), to: z.number().int() })),
});
export type ChainReport = z.output<typeof chainReportView>;

/** The public check: never content, owner or ids. */
export const hashCheckView = z.object({
  content_hash: z.string(),
  exists: z.literal(true),
  intact: z.boolean(),
  sealed_at: z.iso.datetime(),
  algorithm: z.literal(SEAL_ALGORITHM),
});

export function recomputeHash(record: EvidenceRecord): string {
  return contentHash({ ...record, logId: record.id });
}

export class EvidenceService {
  constructor(private readonly evidence: EvidenceRepository) {}

  async ownedRecord(accountId: string, logId: string): Promise<EvidenceRecord> {
    const record = await this.evidence.findByLogId(logId);
    if (!record) throw new AppError(404, `No evidence record with id ${logId}`);
    if (record.accountId !== accountId) {
      throw new AppError(403, `Evidence record ${logId} belongs to another account`);
    }
    return record;
  }

  async verify(accountId: string, logId: string): Promise<RecordVerification> {
    const record = await this.ownedRecord(accountId, logId);
    const recomputed = recomputeHash(record);
    const sealed = record.contentHash !== undefined;
    const match = sealed && recomputed === record.contentHash;
    const predecessor = record.prevLogId ? await this.evidence.findByLogId(record.prevLogId) : null;
    const isPredecessor =
      predecessor?.accountId === accountId && predecessor.seq === record.seq - 1;
    const predecessorHash = isPredecessor ? (predecessor.contentHash ?? null) : null;
    const holds = record.seq === 1 ? record.prevHash === null : predecessorHash === record.prevHash;
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
    };
  }

  /** For anyone: whether a sealed record with this hash exists and is intact. Nothing else. */
  async publicCheck(hash: string): Promise<z.output<typeof hashCheckView>> {
    const record = await this.evidence.findByHash(hash);
    if (!record) throw new AppError(404, 'No sealed record has this content hash');
    return {
      content_hash: hash,
      exists: true,
      intact: recomputeHash(record) === hash,
      sealed_at: record.sealedAt.toISOString(),
      algorithm: record.algorithm ?? SEAL_ALGORITHM,
    };
  }

  /** Walks the whole chain oldest first, reporting the first edit, the first broken link and gaps. */
  async checkChain(accountId: string): Promise<ChainReport> {
    const report: ChainReport = {
      intact: true,
      records_checked: 0,
      head: null,
      first_edited: null,
      first_broken_link: null,
      missing_seqs: [],
    };
    let expected = 1;
    let previous: EvidenceRecord | null = null;
    for await (const record of this.evidence.streamAscending(accountId)) {
      report.records_checked += 1;
      if (record.seq > expected) report.missing_seqs.push({ from: expected, to: record.seq - 1 });
      if (!report.first_edited && recomputeHash(record) !== record.contentHash) {
        report.first_edited = { log_id: record.id, seq: record.seq };
      }
      const predecessorHash =
        previous?.seq === record.seq - 1 ? (previous.contentHash ?? null) : undefined;
      const linkBroken =
        record.seq === 1
          ? record.prevHash !== null
          : predecessorHash !== undefined && predecessorHash !== record.prevHash;
      if (!report.first_broken_link && linkBroken) {
        report.first_broken_link = {
          log_id: record.id,
          seq: record.seq,
          prev_hash: record.prevHash,
          predecessor_hash: predecessorHash ?? '',
        };
      }
      expected = record.seq + 1;
      previous = record;
    }
    const head = await this.evidence.chainHead(accountId);
    if (head && head.seq >= expected) report.missing_seqs.push({ from: expected, to: head.seq });
    report.head = head && { seq: head.seq, hash: head.hash };
    report.intact =
      !report.first_edited && !report.first_broken_link && !report.missing_seqs.length;
    return report;
  }
}
