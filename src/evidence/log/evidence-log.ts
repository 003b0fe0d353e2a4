import type { Db } from 'mongodb';
import pino from 'pino';
import { z } from 'zod';
import type { Clock } from '../../clock';
import { DomainError } from '../../errors';
import type { Logger } from '../../logger';
import { Checkpoints, type CheckpointDoc } from './checkpoints';
import { signPromise, type InclusionPromise } from './inclusion-promise';
import { LeafLog } from './log-leaves';
import { MerkleTreeStore } from './log-tree';
import { fingerprint, verifierKey, type NoteSigner } from './signed-note';
import { SignerLease } from './signer-lease';
import { LogTiles } from './tiles';
import { WitnessClient, type Witness } from './witnesses';

/** How a leaf is made from a record, stated in exports so a verifier needs nothing else. */
export const LEAF_RULE =
  'RFC 9162 SHA-256 Merkle tree; leaf hash = SHA-256(0x00 || the 32 bytes of content_hash)';

export const checkpointView = z
  .object({
    size: z.number().int(),
    root_hash: z.string(),
    /** The C2SP tlog-checkpoint, as a signed note. */
    note: z.string(),
    issued_at: z.iso.datetime(),
  })
  .meta({ id: 'Checkpoint' });

/** A record's inclusion in a signed checkpoint. */
export const inclusionView = z.object({
  leaf_index: z.number().int(),
  tree_size: z.number().int(),
  root_hash: z.string(),
  proof: z.array(z.string()),
  checkpoint: z.string(),
});
export type Inclusion = z.output<typeof inclusionView>;

export const publicKeyView = z
  .object({
    origin: z.string(),
    /** The C2SP/sumdb verifier key: `<name>+<key id>+<base64(0x01 ‖ Ed25519 public key)>`. */
    vkey: z.string(),
    key_id: z.string(),
    fingerprint_sha256: z.string(),
    algorithm: z.literal('ed25519'),
    leaf_rule: z.string(),
  })
  .meta({ id: 'LogPublicKey' });

export const consistencyView = z
  .object({
    from_size: z.number().int(),
    to_size: z.number().int(),
    proof: z.array(z.string()),
  })
  .meta({ id: 'ConsistencyProof' });

const hex = (b: Buffer) => b.toString('hex');

export function describeCheckpoint(c: CheckpointDoc): z.output<typeof checkpointView> {
  return { size: c._id, root_hash: c.rootHash, note: c.note, issued_at: c.issuedAt.toISOString() };
}

export interface EvidenceLogOptions {
  /** Who cosigns each checkpoint before it is published (`EVIDENCE_WITNESSES`). */
  witnesses?: readonly Witness[];
  log?: Logger;
  /** How long the checkpoint signer's lease lasts unrenewed. */
  leaseMs?: number;
}

/** The signer's lease outlives a few missed renewals (its holder renews about every second). */
const LEASE_MS = 10_000;

/** The deployment-wide Merkle log: its leaves, stored tree, tiles, signed checkpoints and proofs. */
export class EvidenceLog {
  readonly leaves: LeafLog;
  readonly tree: MerkleTreeStore;
  readonly tiles: LogTiles;
  readonly checkpoints: Checkpoints;

  constructor(
    db: Db,
    signer: NoteSigner,
    clock: Clock,
    {
      witnesses = [],
      log = pino({ level: 'silent' }),
      leaseMs = LEASE_MS,
    }: EvidenceLogOptions = {},
  ) {
    this.leaves = new LeafLog(db);
    this.tree = new MerkleTreeStore(db);
    this.tiles = new LogTiles(this.tree);
    this.checkpoints = new Checkpoints(
      db,
      this.tree,
      signer,
      clock,
      new SignerLease(db, log, leaseMs),
      new WitnessClient(witnesses, this.tree, log),
    );
  }

  /** The signed promise that this sealed record's leaf is at `leafIndex` (see inclusion-promise.ts). */
  promise(record: { contentHash?: string; sealedAt: Date }, leafIndex: number): InclusionPromise {
    return signPromise(this.checkpoints.signer, {
      leafIndex,
      contentHash: record.contentHash!,
      sealedAt: record.sealedAt,
    });
  }

  publicKey(): z.output<typeof publicKeyView> {
    const { signer } = this.checkpoints;
    return {
      origin: signer.name,
      vkey: verifierKey(signer),
      key_id: hex(signer.keyId),
      fingerprint_sha256: fingerprint(signer),
      algorithm: 'ed25519',
      leaf_rule: LEAF_RULE,
    };
  }

  /**
   * The record's leaf index and, when a checkpoint covers it, its inclusion proof. `issue` signs a
   * new checkpoint when the latest does not cover the leaf yet (for signed-in owners; the public
   * check answers from the latest and says null until the next one).
   */
  async inclusionOf(
    logId: string,
    mode: 'latest' | 'issue',
  ): Promise<{ leafIndex: number | null; inclusion: Inclusion | null }> {
    const leafIndex = (await this.leaves.indexesOf([logId])).get(logId) ?? null;
    if (leafIndex === null) return { leafIndex, inclusion: null };
    const checkpoint =
      mode === 'issue'
        ? await this.checkpoints.covering(leafIndex)
        : await this.checkpoints.latest();
    if (!checkpoint || checkpoint._id <= leafIndex) return { leafIndex, inclusion: null };
    const proof = await this.tree.inclusionProof(leafIndex, checkpoint._id);
    return {
      leafIndex,
      inclusion: {
        leaf_index: leafIndex,
        tree_size: checkpoint._id,
        root_hash: checkpoint.rootHash,
        proof: proof.map(hex),
        checkpoint: checkpoint.note,
      },
    };
  }

  /** RFC 9162 consistency between two sizes; `to` must be a size some checkpoint was signed at. */
  async consistency(from: number, to: number): Promise<z.output<typeof consistencyView>> {
    if (from < 1 || from > to)
      throw new DomainError('invalid', 'from: must be at least 1 and at most to');
    const checkpoint = await this.checkpoints.bySize(to);
    if (!checkpoint) throw new DomainError('not_found', `No checkpoint was signed at size ${to}`);
    const proof = await this.tree.consistencyProof(from, to);
    return { from_size: from, to_size: to, proof: proof.map(hex) };
  }
}
