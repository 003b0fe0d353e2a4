import type { Collection, Db } from 'mongodb';
import type { Clock } from '../../clock';
import type { CollectionIndexes } from '../../db/mongo';
import { isDuplicateKeyError } from '../../db/mongo';
import { KeyedQueue } from '../../keyed-queue';
import type { Logger } from '../../logger';
import type { MerkleTreeStore } from './log-tree';
import { checkpointText, signNote, type NoteSigner } from './signed-note';

/** A signed checkpoint, kept for good: `_id` is the tree size it commits to. */
export interface CheckpointDoc {
  _id: number;
  rootHash: string;
  /** The C2SP signed note: checkpoint body, blank line, signature line(s). */
  note: string;
  issuedAt: Date;
}

export const checkpointsIndexes: CollectionIndexes = {
  collection: 'evidence_checkpoints',
  indexes: [],
};

/**
 * Issues signed checkpoints of the Merkle log. A checkpoint at a given size is the same bytes
 * whichever process signs it (the body is origin, size and root; Ed25519 signatures are
 * deterministic), so two API processes issuing at once store one document.
 */
export class Checkpoints {
  private readonly checkpoints: Collection<CheckpointDoc>;
  private readonly queue = new KeyedQueue();

  constructor(
    db: Db,
    private readonly tree: MerkleTreeStore,
    readonly signer: NoteSigner,
    private readonly clock: Clock,
  ) {
    this.checkpoints = db.collection<CheckpointDoc>(checkpointsIndexes.collection);
  }

  latest(): Promise<CheckpointDoc | null> {
    return this.checkpoints.findOne({}, { sort: { _id: -1 } });
  }

  bySize(size: number): Promise<CheckpointDoc | null> {
    return this.checkpoints.findOne({ _id: size });
  }

  /**
   * A checkpoint over every leaf appended before the call (the latest one when nothing arrived
   * since); null while the log is empty. Issues in this process run one at a time.
   */
  issue(): Promise<CheckpointDoc | null> {
    return this.queue.run('issue', () => this.issueNow());
  }

  /** The latest checkpoint when it covers this leaf, otherwise a new one. */
  async covering(leafIndex: number): Promise<CheckpointDoc | null> {
    const latest = await this.latest();
    return latest && latest._id > leafIndex ? latest : this.issue();
  }

  /** Issues every `ms` while the process runs (a no-op when no record arrived); returns a stop. */
  every(ms: number, log: Logger): () => void {
    const timer = setInterval(() => {
      this.issue().catch((err: unknown) => log.error({ err }, 'checkpoint not issued: will retry'));
    }, ms);
    timer.unref();
    return () => clearInterval(timer);
  }

  private async issueNow(): Promise<CheckpointDoc | null> {
    const latest = await this.latest();
    const { size, root } = await this.tree.integrate(latest?._id ?? 0);
    if (size === 0) return null;
    if (latest && size === latest._id) return latest;
    const body = checkpointText({ origin: this.signer.name, size, rootHash: root });
    const doc: CheckpointDoc = {
      _id: size,
      rootHash: root.toString('hex'),
      note: signNote(body, this.signer),
      issuedAt: this.clock(),
    };
    try {
      await this.checkpoints.insertOne(doc);
      return doc;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      return this.bySize(size); // another process signed the same size first
    }
  }
}
