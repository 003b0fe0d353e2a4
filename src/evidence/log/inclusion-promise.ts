import { z } from 'zod';
import { recordLeafHash } from './log-tree';
import { verifyInclusion } from './merkle';
import {
  fingerprint,
  openNote,
  parseCheckpoint,
  signNote,
  type Checkpoint,
  type NoteSigner,
  type NoteVerifier,
} from './signed-note';

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

/** An inclusion proof as the verify and check answers carry it (see inclusionView). */
export interface ProvenInclusion {
  leaf_index: number;
  proof: string[];
  checkpoint: string;
}

/**
 * Checks a promise offline, trusting only the log's public key(s): its signature, that it is for
 * this content hash, and, given the inclusion proof of a later answer, that the checkpoint it is
 * proven against is signed, covers the promised index and includes the leaf there. Answers one
 * line: VERIFIED …, or FAILED and the first thing that does not hold.
 */
export function verifyPromise(
  note: string,
  contentHash: string,
  inclusion: ProvenInclusion | null,
  keys: readonly NoteVerifier[],
): { ok: boolean; line: string } {
  const fail = (reason: string) => ({ ok: false, line: `FAILED: ${reason}` });
  let promised: Omit<InclusionPromise, 'note'>;
  try {
    promised = openPromise(note, keys);
  } catch (err) {
    return fail(`the promise: ${(err as Error).message}`);
  }
  const leaf = recordLeafHash(contentHash);
  if (promised.leaf_hash !== leaf.toString('base64')) {
    return fail(`the promise is for another record than content hash ${contentHash}`);
  }
  const what = `leaf ${promised.leaf_index} (content hash ${contentHash}, sealed ${promised.timestamp}) promised by log ${promised.log_id}`;
  if (!inclusion) return { ok: true, line: `VERIFIED: ${what}; no inclusion proof given yet` };
  let checkpoint: Checkpoint;
  try {
    checkpoint = parseCheckpoint(openNote(inclusion.checkpoint, keys));
  } catch (err) {
    return fail(`the checkpoint: ${(err as Error).message}`);
  }
  if (inclusion.leaf_index !== promised.leaf_index || checkpoint.size <= promised.leaf_index) {
    return fail(
      `the checkpoint of size ${checkpoint.size} does not hold the promised leaf ${promised.leaf_index}`,
    );
  }
  const proof = inclusion.proof.map((p) => Buffer.from(p, 'hex'));
  if (!verifyInclusion(promised.leaf_index, checkpoint.size, leaf, proof, checkpoint.rootHash)) {
    return fail(
      `the log broke its promise: leaf ${promised.leaf_index} is not in checkpoint ${checkpoint.origin} size ${checkpoint.size}`,
    );
  }
  return {
    ok: true,
    line: `VERIFIED: ${what}; included in checkpoint ${checkpoint.origin} size ${checkpoint.size}`,
  };
}
