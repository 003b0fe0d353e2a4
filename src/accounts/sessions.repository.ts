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

export const sessionsIndexes: CollectionIndexes = {
  collection: 'sessions',
  indexes: [
    { key: { tokenHash: 1 }, name: 'token_hash_unique', unique: true },
    { key: { refreshHash: 1 }, name: 'refresh_hash_unique', unique: true },
    { key: { userId: 1 }, name: 'user_id' },
  ],
};

function toSession({ _id, ...rest }: SessionDoc): Session {
  return { id: _id, ...rest };
}

export class SessionsRepository {
  private readonly sessions: Collection<SessionDoc>;

  constructor(db: Db) {
    this.sessions = db.collection<SessionDoc>(sessionsIndexes.collection);
  }

  async create(session: Session): Promise<void> {
    const { id, ...rest } = session;
    await this.sessions.insertOne({ _id: id, ...rest });
  }

  async findByTokenHash(tokenHash: string, now: Date): Promise<Session | null> {
    const doc = await this.sessions.findOne({ tokenHash, tokenExpiresAt: { $gt: now } });
    return doc && toSession(doc);
  }

  /** Atomic swap, so a refresh secret works once even when two tabs race to use it. */
  async rotate(refreshHash: string, now: Date, next: SessionSecrets): Promise<Session | null> {
    const doc = await this.sessions.findOneAndUpdate(
      { refreshHash, refreshExpiresAt: { $gt: now } },
      { $set: next },
      { returnDocument: 'after' },
    );
    return doc && toSession(doc);
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
  }
}
