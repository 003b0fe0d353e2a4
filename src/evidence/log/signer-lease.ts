import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import type { CollectionIndexes } from '../../db/mongo';
import { isDuplicateKeyError } from '../../db/mongo';
import type { Logger } from '../../logger';
import { checkpointSigner } from '../../metrics';

/** The one lease: who signs checkpoints, until when, and the largest size asked of it. */
export interface SignerLeaseDoc {
  _id: 'checkpoint-signer';
  holder: string;
  expiresAt: Date;
  /** The largest tree size another process asked a checkpoint for. */
  wanted: number;
}

export const signerLeaseIndexes: CollectionIndexes = {
  collection: 'evidence_signer_lease',
  indexes: [],
};

const ID = 'checkpoint-signer';

/**
 * One checkpoint signer at a time across every API replica: a lease document in MongoDB, taken
 * when it is free or expired and renewed by its holder while it runs (`_id` uniqueness decides
 * between two processes taking it at once). Replicas that need a checkpoint ask the holder
 * through the document (`wanted`) instead of signing. Whether this process holds it is the
 * `evidence_checkpoint_signer` gauge, and each change is logged.
 */
export class SignerLease {
  /** This process, as the lease names it. */
  readonly holder = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
  private readonly leases: Collection<SignerLeaseDoc>;
  private held = false;

  constructor(
    db: Db,
    private readonly log: Logger,
    readonly ttlMs: number,
  ) {
    this.leases = db.collection<SignerLeaseDoc>(signerLeaseIndexes.collection);
  }

  /**
   * Takes or renews the lease; true while this process holds it. Wall-clock time, not the app's
   * clock: a lease must lapse when its holder stops, whatever time a test has frozen.
   */
  async hold(): Promise<boolean> {
    const now = new Date();
    let held: boolean;
    try {
      await this.leases.updateOne(
        { _id: ID, $or: [{ holder: this.holder }, { expiresAt: { $lte: now } }] },
        {
          $set: { holder: this.holder, expiresAt: new Date(now.getTime() + this.ttlMs) },
          $setOnInsert: { wanted: 0 },
        },
        { upsert: true },
      );
      held = true;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      held = false; // another live process holds it
    }
    if (held !== this.held) {
      this.log.info(
        { holder: this.holder },
        held ? 'now signing checkpoints' : 'lost the checkpoint signing lease',
      );
      checkpointSigner.set(held ? 1 : 0);
    }
    this.held = held;
    return held;
  }

  /** Gives the lease up (shutdown), so another replica takes over at once. */
  async release(): Promise<void> {
    if (!this.held) return;
    await this.leases.updateOne(
      { _id: ID, holder: this.holder },
      { $set: { expiresAt: new Date(0) } },
    );
    this.held = false;
    checkpointSigner.set(0);
  }

  /** Asks the holder for a checkpoint of at least this size. */
  async request(size: number): Promise<void> {
    await this.leases.updateOne({ _id: ID }, { $max: { wanted: size } });
  }

  current(): Promise<SignerLeaseDoc | null> {
    return this.leases.findOne({ _id: ID });
  }
}
