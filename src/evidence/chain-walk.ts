import { z } from 'zod';
import { contentHash, type JsonObject } from './seal';

/** Sealed by the forced removal of evidence (see canaries/evidence-bound-removal.ts). */
export const EVIDENCE_REMOVED_KIND = 'evidence.removed';

/** A record as exported: every field its content hash covers. */
export interface WalkedRecord {
  log_id: string;
  seq: number;
  kind: string;
  sealed_at: string;
  prev_hash: string | null;
  content_hash: string | null;
  data: Record<string, unknown>;
}

export const seqRangeView = z.object({ from: z.number().int(), to: z.number().int() });

export const chainFindingsView = z.object({
  intact: z.boolean(),
  records_checked: z.number().int(),
  first_edited: z.object({ log_id: z.string(), seq: z.number().int() }).nullable(),
  first_broken_link: z
    .object({
      log_id: z.string(),
      seq: z.number().int(),
      prev_hash: z.string().nullable(),
      predecessor_hash: z.string(),
    })
    .nullable(),
  /** Gaps no sealed removal explains: tampering. */
  missing_seqs: z.array(seqRangeView),
  /** Gaps a sealed `evidence.removed` record explains (a console force-delete). */
  removed_seqs: z.array(seqRangeView.extend({ removed_by: z.string() })),
});
export type ChainFindings = z.output<typeof chainFindingsView>;

export function recomputeContentHash(accountId: string, r: WalkedRecord): string {
  return contentHash({
    logId: r.log_id,
    accountId,
    seq: r.seq,
    kind: r.kind,
    sealedAt: new Date(r.sealed_at),
    prevHash: r.prev_hash,
    data: r.data as JsonObject,
  });
}

/**
 * The one set of chain rules, used by the service's chain check, the PDF's verification and the
 * offline verifier: records are added oldest first; each must reproduce its content hash and
 * carry its predecessor's; a gap in the sequence is tampering unless a sealed removal record
 * (anywhere in the walk, as it is sealed after the gap it explains) lists those sequence numbers.
 */
export class ChainWalk {
  private checked = 0;
  private expected = 1;
  private previous: WalkedRecord | null = null;
  private firstEdited: ChainFindings['first_edited'] = null;
  private firstBrokenLink: ChainFindings['first_broken_link'] = null;
  private readonly gaps: { from: number; to: number }[] = [];
  private readonly removedBy = new Map<number, string>();

  constructor(private readonly accountId: string) {}

  add(record: WalkedRecord): void {
    this.checked += 1;
    if (record.seq > this.expected) this.gaps.push({ from: this.expected, to: record.seq - 1 });
    if (!this.firstEdited && recomputeContentHash(this.accountId, record) !== record.content_hash) {
      this.firstEdited = { log_id: record.log_id, seq: record.seq };
    }
    const predecessorHash =
      this.previous?.seq === record.seq - 1 ? this.previous.content_hash : undefined;
    const broken =
      record.seq === 1
        ? record.prev_hash !== null
        : predecessorHash !== undefined && predecessorHash !== record.prev_hash;
    if (!this.firstBrokenLink && (broken || record.seq < this.expected)) {
      this.firstBrokenLink = {
        log_id: record.log_id,
        seq: record.seq,
        prev_hash: record.prev_hash,
        predecessor_hash: predecessorHash ?? '',
      };
    }
    if (record.kind === EVIDENCE_REMOVED_KIND && Array.isArray(record.data.removed_seqs)) {
      for (const seq of record.data.removed_seqs) {
        if (typeof seq === 'number') this.removedBy.set(seq, record.log_id);
      }
    }
    this.expected = Math.max(this.expected, record.seq + 1);
    this.previous = record;
  }

  /** The findings; `headSeq` is where the walk should have ended (records after it are ignored). */
  finish(headSeq: number | null): ChainFindings {
    const gaps = [...this.gaps];
    if (headSeq !== null && headSeq >= this.expected)
      gaps.push({ from: this.expected, to: headSeq });
    const missing: ChainFindings['missing_seqs'] = [];
    const removed: ChainFindings['removed_seqs'] = [];
    for (const gap of gaps) {
      for (let seq = gap.from; seq <= gap.to; seq++) {
        const by = this.removedBy.get(seq);
        if (by) {
          const last = removed.at(-1);
          if (last?.to === seq - 1 && last.removed_by === by) last.to = seq;
          else removed.push({ from: seq, to: seq, removed_by: by });
        } else {
          const last = missing.at(-1);
          if (last?.to === seq - 1) last.to = seq;
          else missing.push({ from: seq, to: seq });
        }
      }
    }
    return {
      intact: !this.firstEdited && !this.firstBrokenLink && !missing.length,
      records_checked: this.checked,
      first_edited: this.firstEdited,
      first_broken_link: this.firstBrokenLink,
      missing_seqs: missing,
      removed_seqs: removed,
    };
  }
}
