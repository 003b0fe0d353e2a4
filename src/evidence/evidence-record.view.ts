import { z } from 'zod';
import type { EvidenceRecord } from './evidence.repository';
import { openingView, type Opening } from './personal-fields';
import { SEAL_ALGORITHM } from './seal';

/** Every field the content hash covers, so anyone can recompute it (see seal.ts). */
export const exportedRecordView = z.object({
  log_id: z.string(),
  seq: z.number().int(),
  kind: z.string(),
  sealed_at: z.iso.datetime(),
  prev_hash: z.string().nullable(),
  content_hash: z.string().nullable(),
  algorithm: z.literal(SEAL_ALGORITHM).nullable(),
  data: z.record(z.string(), z.unknown()),
  /**
   * The personal values `data` holds as salted digests, with their salts (anyone can check them
   * against the digests); empty once the account they belong to is erased.
   */
  personal: z.array(openingView).default([]),
});

/** One record as exported and as the console lists it. */
export function exportedRecord(
  record: EvidenceRecord,
  personal: Opening[] = [],
): z.output<typeof exportedRecordView> {
  return {
    log_id: record.id,
    seq: record.seq,
    kind: record.kind,
    sealed_at: record.sealedAt.toISOString(),
    prev_hash: record.prevHash,
    content_hash: record.contentHash ?? null,
    algorithm: record.algorithm ?? null,
    data: record.data,
    personal,
  };
}
