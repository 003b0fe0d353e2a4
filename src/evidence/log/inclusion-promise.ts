import { z } from 'zod';
import { recordLeafHash } from './log-tree';
import { fingerprint, openNote, signNote, type NoteSigner, type NoteVerifier } from './signed-note';

/**
 * A signed inclusion promise, like Rekor's signed entry timestamp: the log's signature, at write
 * time, that a record's leaf is at an index of the log. A signed note whose first line names the
 * format, so it can never be read as a checkpoint (whose first line is the log's origin):
 *
 *   tripwire-evidence/inclusion-promise/v1
 *   <log id: SHA-256 of the log's public key, hex>
 *   <leaf index>
 *   <leaf hash, base64>
 *   <timestamp: the record's sealed_at, RFC 3339>
 *
 * The timestamp is the record's sealing time, so the promise is the same bytes whenever it is made
 * (Ed25519 is deterministic): the write answer, the owner's verify and the public check all carry
 * the one promise. A checkpoint of a larger size keeps it: its inclusion proof for the leaf.
 */
const HEADER = 'tripwire-evidence/inclusion-promise/v1';

export const inclusionPromiseView = z
  .object({
    log_id: z.string(),
    leaf_index: z.number().int(),
    leaf_hash: z.string(),
    timestamp: z.iso.datetime(),
    /** The signed note itself: what a verifier checks, against the log's public key. */
    note: z.string(),
  })
  .meta({ id: 'InclusionPromise' });
export type InclusionPromise = z.output<typeof inclusionPromiseView>;

export interface PromisedLeaf {
  leafIndex: number;
  contentHash: string;
  sealedAt: Date;
}

export function signPromise(signer: NoteSigner, leaf: PromisedLeaf): InclusionPromise {
  const fields = {
    log_id: fingerprint(signer),
    leaf_index: leaf.leafIndex,
    leaf_hash: recordLeafHash(leaf.contentHash).toString('base64'),
    timestamp: leaf.sealedAt.toISOString(),
  };
  const text = [HEADER, fields.log_id, fields.leaf_index, fields.leaf_hash, fields.timestamp, ''];
  return { ...fields, note: signNote(text.join('\n'), signer) };
}

/** The promise's fields as signed, when its signature is by one of these keys; throws otherwise. */
export function openPromise(
  note: string,
  keys: readonly NoteVerifier[],
): Omit<InclusionPromise, 'note'> {
  const [header, logId, index, hash, timestamp, end] = openNote(note, keys).split('\n');
  const leafIndex = Number(index);
  if (header !== HEADER || end !== '' || !/^(0|[1-9]\d*)$/.test(index ?? '')) {
    throw new Error('not an inclusion promise');
  }
  if (!keys.some((k) => fingerprint(k) === logId)) {
    throw new Error('the promise names another log than the key that signed it');
  }
  return { log_id: logId!, leaf_index: leafIndex, leaf_hash: hash!, timestamp: timestamp! };
}
