import { setTimeout as sleep } from 'node:timers/promises';
import type { Collection, Db } from 'mongodb';
import type { Clock } from '../../clock';
import type { CollectionIndexes } from '../../db/mongo';
import { isDuplicateKeyError } from '../../db/mongo';
import { DomainError } from '../../errors';
import { KeyedQueue } from '../../keyed-queue';
import type { Logger } from '../../logger';
import type { MerkleTreeStore } from './log-tree';
import { checkpointText, signNote, type NoteSigner } from './signed-note';
import type { SignerLease } from './signer-lease';
import type { WitnessClient } from './witnesses';

/** A signed checkpoint, kept for good: `_id` is the tree size it commits to. */
export interface CheckpointDoc {
  _id: number;
  rootHash: string;
  /** The C2SP signed note: checkpoint body, blank line, the log's signature line. */
  note: string;
  issuedAt: Date;
  /** The witnesses' cosignature lines (C2SP tlog-cosignature), once they were asked. */
  cosignatures?: string[];
  /** When the witnesses had been asked: from then on it is the log's published checkpoint. */
  publishedAt?: Date;
}

export const checkpointsIndexes: CollectionIndexes = {
  collection: 'evidence_checkpoints',
  // `/log/checkpoint`: the newest published (one signer publishes sizes in order).
  indexes: [{ key: { publishedAt: -1, _id: -1 }, name: 'published_newest' }],
};

/** The checkpoint note as published: the log's signature, then every witness's cosignature. */
export const cosignedNote = (c: CheckpointDoc) => c.note + (c.cosignatures ?? []).join('');

/** How often the holder looks for asks, and a waiting replica for the checkpoint it asked for. */
const POLL_MS = 100;

/**
 * Issues signed checkpoints of the Merkle log, one signer at a time (SignerLease): the holder
 * integrates the tree, signs, asks the witnesses to cosign and then publishes; a replica that needs
 * a checkpoint while another holds the lease asks the holder and waits for it. A checkpoint at a
 * size is the same bytes whoever signs it (Ed25519 is deterministic) and `_id` is its size, so even
 * a lease that two processes believe they hold (a paused holder outliving its lease) yields one
 * document per size.
 */
export class Checkpoints {
  private readonly checkpoints: Collection<CheckpointDoc>;
  private readonly queue = new KeyedQueue();
  private lastIssue = 0;

  constructor(
    db: Db,
    private readonly tree: MerkleTreeStore,
    readonly signer: NoteSigner,
    private readonly clock: Clock,
    readonly lease: SignerLease,
    readonly witnesses: WitnessClient,
  ) {
    this.checkpoints = db.collection<CheckpointDoc>(checkpointsIndexes.collection);
  }

  latest(): Promise<CheckpointDoc | null> {
    return this.checkpoints.findOne({}, { sort: { _id: -1 } });
  }

  /** The newest checkpoint the witnesses were asked to cosign (what `/log/checkpoint` serves). */
  published(): Promise<CheckpointDoc | null> {
    return this.checkpoints.findOne(
      { publishedAt: { $gte: new Date(0) } },
      { sort: { publishedAt: -1, _id: -1 } },
    );
  }

  bySize(size: number): Promise<CheckpointDoc | null> {
    return this.checkpoints.findOne({ _id: size });
  }

  /**
   * A checkpoint over every leaf appended before the call (the latest one when nothing arrived
   * since); null while the log is empty. Signed here when this process holds (or can take) the
   * lease, otherwise by the holder, asked through the lease.
   */
  issue(): Promise<CheckpointDoc | null> {
    return this.queue.run('issue', async () => {
      if (await this.lease.hold()) return this.signAndPublish();
      const { size } = await this.tree.integrate((await this.latest())?._id ?? 0);
      return size === 0 ? null : this.fromHolder(size);
    });
  }

  /** The latest checkpoint when it covers this leaf, otherwise a new one. */
  async covering(leafIndex: number): Promise<CheckpointDoc | null> {
    const latest = await this.latest();
    return latest && latest._id > leafIndex ? latest : this.issue();
  }

  /**
   * The signer's loop, in every API process: whichever holds the lease renews it, answers asks at
   * once and signs every `intervalMs` while records arrive; the others stand by to take over when
   * it lapses. Returns a stop that gives the lease up.
   */
  run(intervalMs: number, log: Logger): () => Promise<void> {
    const stop = new AbortController();
    const tick = Math.min(intervalMs, this.lease.ttlMs / 5, 1_000);
    const loop = async () => {
      while (!stop.signal.aborted) {
        try {
          if (await this.lease.hold()) await this.answerAsks(intervalMs);
        } catch (err) {
          log.error({ err }, 'checkpoint not issued: will retry');
        }
        await sleep(tick, undefined, { signal: stop.signal }).catch(() => undefined);
      }
    };
    const running = loop();
    return async () => {
      stop.abort();
      await running;
      await this.lease.release();
    };
  }

  private async answerAsks(intervalMs: number): Promise<void> {
    const [lease, latest] = await Promise.all([this.lease.current(), this.latest()]);
    const asked = (lease?.wanted ?? 0) > (latest?._id ?? 0);
    const due = Date.now() - this.lastIssue >= intervalMs;
    if (asked || due || (latest && !latest.publishedAt)) await this.issue();
  }

  /** Waits for the holder to sign at least `size`, taking over if the lease lapses meanwhile. */
  private async fromHolder(size: number): Promise<CheckpointDoc> {
    await this.lease.request(size);
    const deadline = Date.now() + 3 * this.lease.ttlMs;
    while (Date.now() < deadline) {
      const latest = await this.latest();
      if (latest && latest._id >= size) return latest;
      if (await this.lease.hold()) return (await this.signAndPublish())!;
      await sleep(POLL_MS);
    }
    throw new DomainError('unavailable', 'No checkpoint signer answered: try again shortly');
  }

  private async signAndPublish(): Promise<CheckpointDoc | null> {
    this.lastIssue = Date.now();
    const latest = await this.latest();
    const { size, root } = await this.tree.integrate(latest?._id ?? 0);
    if (size === 0) return null;
    if (latest && size === latest._id) return latest.publishedAt ? latest : this.publish(latest);
    const body = checkpointText({ origin: this.signer.name, size, rootHash: root });
    const doc: CheckpointDoc = {
      _id: size,
      rootHash: root.toString('hex'),
      note: signNote(body, this.signer),
      issuedAt: this.clock(),
    };
    try {
      await this.checkpoints.insertOne(doc);
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      return this.bySize(size); // signed at this size already, by a holder before this one
    }
    return this.publish(doc);
  }

  /** Collects the witnesses' cosignatures, then publishes the checkpoint with them. */
  private async publish(doc: CheckpointDoc): Promise<CheckpointDoc> {
    const cosignatures = await this.witnesses.cosign(doc.note, doc._id);
    const publishedAt = this.clock();
    await this.checkpoints.updateOne({ _id: doc._id }, { $set: { cosignatures, publishedAt } });
    return { ...doc, cosignatures, publishedAt };
  }
}
