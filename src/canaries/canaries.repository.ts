import { LRUCache } from 'lru-cache';
import { Binary, type Collection, type Db } from 'mongodb';
import { journaled, type CollectionIndexes } from '../db/mongo';
import { newId } from '../ids';
import { tokenDigest, type DecoyFile } from './decoys';
import type { Artifact, CanaryKind, Planted } from './kinds';

export interface Canary {
  id: string;
  accountId: string;
  kind: CanaryKind;
  memo: string;
  /** Where it was planted; null when the owner did not say (then learned from the firing request). */
  platform: string | null;
  /** The decoy itself: not a secret (it unlocks nothing), shown so the owner can plant it. */
  value: string;
  secret: string | null;
  /** Files planted with it (the cloud key's profile). */
  files?: DecoyFile[];
  /** The downloadable file that carries it (documents, QR codes, dumps…), without its bytes. */
  artifact?: Omit<Artifact, 'body'>;
  /** fast_redirect / slow_redirect: where a visitor is sent. */
  redirectUrl?: string;
  tokenDigests: string[];
  createdAt: Date;
  retiredAt: Date | null;
  /** Hits recorded so far and when the last one happened (absent on canaries that never fired). */
  hitCount?: number;
  lastHitAt?: Date | null;
}

type CanaryDoc = Omit<Canary, 'id' | 'artifact'> & {
  _id: string;
  artifact?: Omit<Artifact, 'body'> & { body: Binary };
};

/** Canaries are read without their artifact's bytes, which only the download needs. */
const WITHOUT_BODY = { projection: { 'artifact.body': 0 } } as const;

/** Token digest → canary, read by `_id` on every rejected credential (one indexed point read). */
interface TokenDoc {
  _id: string;
  canaryId: string;
}

export const canariesIndexes: CollectionIndexes = {
  collection: 'canaries',
  indexes: [{ key: { accountId: 1, createdAt: -1 }, name: 'account_newest_first' }],
};
export const canaryTokensIndexes: CollectionIndexes = { collection: 'canary_tokens', indexes: [] };

/** How long the hit recorder keeps a canary it read (`hitTargets`). */
export const HIT_TARGET_CACHE_MS = 30_000;

const toCanary = ({ _id, artifact, ...rest }: CanaryDoc): Canary => ({
  id: _id,
  ...rest,
  ...(artifact && { artifact: { filename: artifact.filename, contentType: artifact.contentType } }),
});

/**
 * Reads and writes made for a caller name the canary's account; the unscoped ones serve the
 * tripwires (a hit names a token, not an account) and the worker's activities.
 */
export class CanariesRepository {
  private readonly canaries: Collection<CanaryDoc>;
  /** The tallies: the tripwire seal's last write, journaled (see `countHits`). */
  private readonly tallies: Collection<CanaryDoc>;
  private readonly tokens: Collection<TokenDoc>;
  private readonly hitTargetCache = new LRUCache<string, Canary>({
    max: 10_000,
    ttl: HIT_TARGET_CACHE_MS,
  });

  constructor(db: Db) {
    this.canaries = db.collection<CanaryDoc>(canariesIndexes.collection);
    this.tallies = journaled(db).collection<CanaryDoc>(canariesIndexes.collection);
    this.tokens = db.collection<TokenDoc>(canaryTokensIndexes.collection);
  }

  /** The canary first, then its tokens: a token never points at a canary that is not stored. */
  async plant(
    fields: Pick<Canary, 'accountId' | 'kind' | 'memo' | 'platform'>,
    decoy: Planted,
    now: Date,
  ): Promise<Canary> {
    const { artifact, redirectUrl } = decoy;
    const doc: CanaryDoc = {
      _id: newId('cnr'),
      ...fields,
      value: decoy.value,
      secret: decoy.secret ?? null,
      ...(decoy.files && { files: decoy.files }),
      ...(artifact && { artifact: { ...artifact, body: new Binary(artifact.body) } }),
      ...(redirectUrl && { redirectUrl }),
      tokenDigests: decoy.tokens.map(tokenDigest),
      createdAt: now,
      retiredAt: null,
    };
    await this.canaries.insertOne(doc);
    await this.tokens.insertMany(doc.tokenDigests.map((_id) => ({ _id, canaryId: doc._id })));
    return toCanary(doc);
  }

  async list(accountId: string, includeRetired: boolean): Promise<Canary[]> {
    const filter = includeRetired ? { accountId } : { accountId, retiredAt: null };
    const docs = await this.canaries.find(filter, WITHOUT_BODY).sort({ createdAt: -1 }).toArray();
    return docs.map(toCanary);
  }

  async find(accountId: string, canaryId: string): Promise<Canary | null> {
    const doc = await this.canaries.findOne({ _id: canaryId, accountId }, WITHOUT_BODY);
    return doc && toCanary(doc);
  }

  /** The account's canaries among `canaryIds` (by `_id`), in no particular order. */
  async findMany(accountId: string, canaryIds: string[]): Promise<Canary[]> {
    const docs = await this.canaries
      .find({ _id: { $in: canaryIds }, accountId }, WITHOUT_BODY)
      .toArray();
    return docs.map(toCanary);
  }

  /**
   * A canary's artifact with its bytes: for the owner's download (`accountId`), or for the public
   * route that serves it (`kind`: a web image). Null when there is none.
   */
  async artifact(
    canaryId: string,
    only: { accountId?: string; kind?: CanaryKind },
  ): Promise<Artifact | null> {
    const doc = await this.canaries.findOne(
      { _id: canaryId, ...only },
      { projection: { artifact: 1 } },
    );
    if (!doc?.artifact) return null;
    const { filename, contentType, body } = doc.artifact;
    return { filename, contentType, body: Buffer.from(body.buffer) };
  }

  /** Unscoped, and only the owner: for the 404-versus-403 answer when `find` finds nothing. */
  async ownerOf(canaryId: string): Promise<string | null> {
    const doc = await this.canaries.findOne({ _id: canaryId }, { projection: { accountId: 1 } });
    return doc?.accountId ?? null;
  }

  /**
   * The canaries that hits found by their tokens belong to (those that exist), for the hit
   * recorder: what it needs of them (account, kind, platform, retired or not) never changes but
   * the retirement, so one read serves a storm's batches for `HIT_TARGET_CACHE_MS`. This
   * repository's `retire` forgets its canary at once; another replica's retirement is seen within
   * that time, and only by hits whose token was found before it (tokens go first), that is hits
   * presented while the canary was live. The hit tallies in a kept copy are not kept current.
   */
  async hitTargets(canaryIds: string[]): Promise<Canary[]> {
    const missing = canaryIds.filter((id) => !this.hitTargetCache.has(id));
    if (missing.length) {
      const docs = await this.canaries.find({ _id: { $in: missing } }, WITHOUT_BODY).toArray();
      for (const doc of docs) this.hitTargetCache.set(doc._id, toCanary(doc));
    }
    return canaryIds.flatMap((id) => this.hitTargetCache.get(id) ?? []);
  }

  /** The canary `hitTargets` keeps now, if it keeps it: no read. */
  keptHitTarget(canaryId: string): Canary | undefined {
    return this.hitTargetCache.get(canaryId);
  }

  /**
   * Unscoped: for work on no caller's behalf, which learns the account from the canary itself
   * (a tripwire hit found by its token, the alert activities of the event it fired). Routes use `find`.
   */
  async findById(canaryId: string): Promise<Canary | null> {
    const doc = await this.canaries.findOne({ _id: canaryId }, WITHOUT_BODY);
    return doc && toCanary(doc);
  }

  /**
   * The canary one of these strings belongs to, if any: one point read each, and nothing more,
   * so a rejected credential costs the same whether or not it is a canary.
   */
  async canaryIdForToken(candidates: string[]): Promise<string | null> {
    return this.canaryIdForDigests(candidates.map(tokenDigest));
  }

  /** The same by the strings' digests (the tripwire journal keeps digests, never the strings). */
  async canaryIdForDigests(digests: string[]): Promise<string | null> {
    const found = await Promise.all(digests.map((_id) => this.tokens.findOne({ _id })));
    return found.find((t) => t !== null)?.canaryId ?? null;
  }

  /**
   * Keeps each canary's own tally, so lists show how often each fired without reading its hits:
   * one write for all of them, journaled, so the tripwire seal's unjournaled writes before it are
   * durable with it (`ThreatsRepository.addHits`). `updateMany` (each matches one canary) because
   * the driver never retries it: a retry could reach a restarted database that lost those writes,
   * and make nothing of them durable.
   */
  async countHits(tallies: { canaryId: string; hits: number; lastAt: Date }[]): Promise<void> {
    if (!tallies.length) return;
    await this.tallies.bulkWrite(
      tallies.map(({ canaryId, hits, lastAt }) => ({
        updateMany: {
          filter: { _id: canaryId },
          update: { $inc: { hitCount: hits }, $max: { lastHitAt: lastAt } },
        },
      })),
    );
  }

  /**
   * Retiring removes the tokens first, so a retired canary can no longer fire. Null (and nothing
   * removed) when the account has no such canary.
   */
  async retire(accountId: string, canaryId: string, now: Date): Promise<Canary | null> {
    const canary = await this.find(accountId, canaryId);
    // Retired once: a second retire keeps the first time (and has no tokens left to delete).
    if (!canary || canary.retiredAt) return canary;
    await this.tokens.deleteMany({ _id: { $in: canary.tokenDigests } });
    await this.canaries.updateOne({ _id: canary.id, accountId }, { $set: { retiredAt: now } });
    this.hitTargetCache.delete(canary.id);
    return { ...canary, retiredAt: now };
  }
}
