import { ChainWalk, type ChainFindings } from '../chain-walk';
import type { CutRecord } from './evidence-cut';
import type { EvidenceExport } from './evidence-export';
import { verifyConsistency, verifyInclusion } from '../log/merkle';
import { openNote, parseCheckpoint, type Checkpoint, type NoteVerifier } from '../log/signed-note';
import { recordLeafHash } from '../log/log-tree';
import { openPromise } from '../log/inclusion-promise';
import { openingFailure } from '../personal-fields';
import type { JsonObject } from '../seal';

export interface Verdict {
  ok: boolean;
  /** One line for a person: what holds, or the first thing that does not. */
  line: string;
  failed: { seq: number | null; log_id: string | null; reason: string } | null;
  records: number;
  checkpoint: Checkpoint | null;
  chain: ChainFindings | null;
}

/** A checkpoint the verifier kept from earlier, and the log's consistency proof from it. */
export interface EarlierCheckpoint {
  note: string;
  proof: string[];
}

type Header = Pick<EvidenceExport, 'account_id' | 'cut'>;

/**
 * Checks an export trusting nothing but the public key(s): the checkpoint's signature, every
 * record's content hash and link (ChainWalk), its personal values against their sealed digests, every gap against the sealed removals, the head the
 * export says it was cut at, each record's inclusion proof against the signed root, and, given an
 * earlier checkpoint, that the log only grew since. Records are added one by one, so a PDF can be
 * verified while it streams.
 */
export class ExportVerifier {
  private readonly walk: ChainWalk;
  private checkpoint: Checkpoint | null = null;
  private failure: Verdict['failed'] = null;
  private count = 0;
  private last: CutRecord | null = null;

  constructor(
    private readonly header: Header,
    private readonly keys: readonly NoteVerifier[],
  ) {
    this.walk = new ChainWalk(header.account_id);
    const signed = header.cut.checkpoint;
    if (!signed) return;
    try {
      this.checkpoint = parseCheckpoint(openNote(signed.note, keys));
    } catch (err) {
      this.fail(null, `the checkpoint: ${(err as Error).message}`);
    }
  }

  add(record: CutRecord): void {
    this.count += 1;
    this.walk.add(record);
    this.last = record;
    if (this.failure) return;
    const cp = this.checkpoint;
    if (!cp) return this.fail(record, 'no signed checkpoint covers the export');
    if (record.leaf_index === null || record.inclusion_proof === null || !record.content_hash) {
      return this.fail(record, `not in the checkpoint of size ${cp.size}`);
    }
    for (const opening of record.personal) {
      const mismatch = openingFailure(record.data as JsonObject, opening);
      if (mismatch) return this.fail(record, mismatch);
    }
    const promised = this.promiseFailure(record);
    if (promised) return this.fail(record, promised);
    const included = verifyInclusion(
      record.leaf_index,
      cp.size,
      recordLeafHash(record.content_hash),
      record.inclusion_proof.map((p) => Buffer.from(p, 'hex')),
      cp.rootHash,
    );
    if (!included) return this.fail(record, `its inclusion proof fails against the signed root`);
  }

  /** Whether the record's promise is the log's, for this record at this leaf; the inclusion proof
   * against the checkpoint then shows the log kept it. */
  private promiseFailure(record: CutRecord): string | null {
    if (!record.promise) return 'it carries no inclusion promise';
    let promise: ReturnType<typeof openPromise>;
    try {
      promise = openPromise(record.promise, this.keys);
    } catch (err) {
      return `its inclusion promise: ${(err as Error).message}`;
    }
    const leafHash = recordLeafHash(record.content_hash!).toString('base64');
    if (promise.leaf_hash !== leafHash || promise.timestamp !== record.sealed_at) {
      return 'its inclusion promise is for another record';
    }
    if (promise.leaf_index !== record.leaf_index) {
      return `the log promised it leaf ${promise.leaf_index}, it is at leaf ${record.leaf_index}`;
    }
    return null;
  }

  finish(earlier?: EarlierCheckpoint, keys: readonly NoteVerifier[] = []): Verdict {
    const head = this.header.cut.head;
    const chain = this.walk.finish(head?.seq ?? null);
    if (!this.failure) this.failure = chainFailure(chain);
    if (!this.failure && head && this.last?.seq !== head.seq) {
      this.fail(
        this.last,
        `the export ends at seq ${this.last?.seq ?? 'none'}, its cut at ${head.seq}`,
      );
    }
    if (!this.failure && head && this.last?.content_hash !== head.content_hash) {
      this.fail(this.last, 'the last record is not the head the export was cut at');
    }
    if (!this.failure && earlier) this.checkEarlier(earlier, keys);
    const cp = this.checkpoint;
    const removals = chain.removed_seqs.map((r) => `${r.from}–${r.to}`).join(', ');
    const f = this.failure;
    const where = f?.seq == null ? '' : `record seq ${f.seq}${f.log_id ? ` (${f.log_id})` : ''}: `;
    const line = f
      ? `FAILED: ${where}${f.reason}`
      : `VERIFIED: ${this.count} records` +
        (head ? ` (seq 1–${head.seq})` : '') +
        ` of account ${this.header.account_id}; chain intact` +
        (removals ? `; removals sealed for seq ${removals}` : '') +
        (cp ? `; every record in checkpoint ${cp.origin} size ${cp.size}` : '') +
        (earlier ? '; consistent with the earlier checkpoint' : '');
    return {
      ok: !this.failure,
      line,
      failed: this.failure,
      records: this.count,
      checkpoint: cp,
      chain,
    };
  }

  private checkEarlier(earlier: EarlierCheckpoint, keys: readonly NoteVerifier[]): void {
    const cp = this.checkpoint;
    let old: Checkpoint;
    try {
      old = parseCheckpoint(openNote(earlier.note, keys));
    } catch (err) {
      return this.fail(null, `the earlier checkpoint: ${(err as Error).message}`);
    }
    const proof = earlier.proof.map((p) => Buffer.from(p, 'hex'));
    if (!cp || old.origin !== cp.origin)
      return this.fail(null, 'the earlier checkpoint is of another log');
    if (!verifyConsistency(old.size, cp.size, proof, old.rootHash, cp.rootHash)) {
      this.fail(
        null,
        `the log of size ${cp.size} does not extend the earlier checkpoint of size ${old.size}: it was rewritten`,
      );
    }
  }

  private fail(record: CutRecord | null, reason: string): void {
    this.failure ??= { seq: record?.seq ?? null, log_id: record?.log_id ?? null, reason };
  }
}

function chainFailure(chain: ChainFindings): Verdict['failed'] {
  if (chain.first_edited) {
    return { ...chain.first_edited, reason: 'its content hash does not match its fields (edited)' };
  }
  const link = chain.first_broken_link;
  if (link)
    return {
      seq: link.seq,
      log_id: link.log_id,
      reason: 'its link to the previous record is broken (removed, reordered or replaced)',
    };
  const gap = chain.missing_seqs[0];
  if (gap)
    return {
      seq: gap.from,
      log_id: null,
      reason: `records ${gap.from}–${gap.to} are missing and no sealed removal explains it`,
    };
  return null;
}

/** The whole check over a parsed export document. */
export function verifyExport(
  doc: EvidenceExport,
  keys: readonly NoteVerifier[],
  earlier?: EarlierCheckpoint,
): Verdict {
  const verifier = new ExportVerifier(doc, keys);
  for (const record of doc.records) verifier.add(record);
  return verifier.finish(earlier, keys);
}
