import type { Collection, Db } from 'mongodb';
import type { CollectionIndexes } from '../db/mongo';

/**
 * A console session: a short-lived bearer token plus a longer-lived refresh secret kept in an
 * HttpOnly cookie. Only SHA-256 digests of both are stored.
 */
export interface Session {
  id: string;
  userId: string;
  tokenHash: string;
  tokenExpiresAt: Date;
  refreshHash: string;
  refreshExpiresAt: Date;
  createdAt: Date;
}

export type SessionSecrets = Pick<
  Session,
  'tokenHash' | 'tokenExpiresAt' | 'refreshHash' | 'refreshExpiresAt'
>;

type SessionDoc = Omit<Session, 'id'> & { _id: string };

/** A refresh secret that was rotated away, kept until it would have expired to spot its reuse. */
interface RetiredRefreshDoc {
  _id: string;
  sessionId: string;
  userId: string;
  expiresAt: Date;
}

export const sessionsIndexes: CollectionIndexes = {
  collection: 'sessions',
  indexes: [
    { key: { tokenHash: 1 }, name: 'token_hash_unique', unique: true },
    { key: { refreshHash: 1 }, name: 'refresh_hash_unique', unique: true },
    { key: { userId: 1 }, name: 'user_id' },
  ],
};

/** Looked up by `_id` (the retired secret's digest); cleared per account. */
export const retiredRefreshesIndexes: CollectionIndexes = {
  collection: 'retired_refreshes',
  indexes: [{ key: { userId: 1 }, name: 'user_id' }],
};

function toSession({ _id, ...rest }: SessionDoc): Session {
  return { id: _id, ...rest };
}

export class SessionsRepository {
  private readonly sessions: Collection<SessionDoc>;
  private readonly retired: Collection<RetiredRefreshDoc>;

  constructor(db: Db) {
    this.sessions = db.collection<SessionDoc>(sessionsIndexes.collection);
    this.retired = db.collection<RetiredRefreshDoc>(retiredRefreshesIndexes.collection);
  }

  async create(session: Session): Promise<void> {
    const { id, ...rest } = session;
    await this.sessions.insertOne({ _id: id, ...rest });
  }

  async findByTokenHash(tokenHash: string, now: Date): Promise<Session | null> {
    const doc = await this.sessions.findOne({ tokenHash, tokenExpiresAt: { $gt: now } });
    return doc && toSession(doc);
  }

  /**
   * Atomic swap, so a refresh secret works once even when two tabs race to use it. The old secret
   * is remembered, so presenting it again is recognised as reuse (`findRetired`).
   */
  async rotate(refreshHash: string, now: Date, next: SessionSecrets): Promise<Session | null> {
    const before = await this.sessions.findOneAndUpdate(
      { refreshHash, refreshExpiresAt: { $gt: now } },
      { $set: next },
      { returnDocument: 'before' },
    );
    if (!before) return null;
    await this.retired.insertOne({
      _id: refreshHash,
      sessionId: before._id,
      userId: before.userId,
      expiresAt: before.refreshExpiresAt,
    });
    return toSession({ ...before, ...next });
  }

  /** The session a rotated-away refresh secret belonged to. */
  async findRetired(refreshHash: string): Promise<{ sessionId: string; userId: string } | null> {
    const doc = await this.retired.findOne({ _id: refreshHash });
    return doc && { sessionId: doc.sessionId, userId: doc.userId };
  }

  async delete(sessionId: string): Promise<void> {
    await this.sessions.deleteOne({ _id: sessionId });
  }

  /** Ends every session of the account except `keep` (the one changing the password); a count. */
  async deleteAllOf(userId: string, keep?: string): Promise<number> {
    const filter = keep ? { userId, _id: { $ne: keep } } : { userId };
    const { deletedCount } = await this.sessions.deleteMany(filter);
    return deletedCount;
  }

  async deleteByTokenHash(tokenHash: string): Promise<void> {
    await this.sessions.deleteOne({ tokenHash });
  }

  async deleteByRefreshHash(refreshHash: string): Promise<void> {
    await this.sessions.deleteOne({ refreshHash });
  }

  /** Housekeeping at login (no TTL index: the embedded development database has none). */
  async deleteExpired(userId: string, now: Date): Promise<void> {
    await this.sessions.deleteMany({ userId, refreshExpiresAt: { $lte: now } });
    await this.retired.deleteMany({ userId, expiresAt: { $lte: now } });
  }
}
