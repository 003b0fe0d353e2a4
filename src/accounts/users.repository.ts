import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError, type CollectionIndexes } from '../db/mongo';
import { newId } from '../ids';
import type { PlanId } from '../plans';

export interface User {
  id: string;
  email: string;
  passwordHash: string;
  plan: PlanId;
  /** Where the built-in messaging-chat channel sends this account's alerts; set in its settings. */
  telegramChatId?: string | null;
  /** Opted in to community indicators: shares its hits' source addresses, and sees the indicators. */
  communitySharing?: boolean;
  /** `operator`: may use the admin API and hold `admin:*` keys (set with the admin CLI only). */
  role?: UserRole;
  /** Disabled by an operator: no sign-in, no session, no API key works until re-enabled. */
  disabledAt?: Date | null;
  /** Erasure asked for (POST /api/privacy/erase): no sign in; finished on retry or at start. */
  erasingAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}

export const USER_ROLES = ['user', 'operator'] as const;
export type UserRole = (typeof USER_ROLES)[number];

export const isOperator = (user: User | null): boolean =>
  user?.role === 'operator' && !user.disabledAt;

type UserDoc = Omit<User, 'id'> & { _id: string };

export const usersIndexes: CollectionIndexes = {
  collection: 'users',
  indexes: [
    { key: { email: 1 }, name: 'email_unique', unique: true },
    { key: { communitySharing: 1 }, name: 'community_sharing', sparse: true },
    // Erasures not finished (a crash part-way), looked for at start and every minute.
    { key: { erasingAt: 1 }, name: 'erasing', sparse: true },
  ],
};

export class EmailTakenError extends Error {}

function toUser({ _id, ...rest }: UserDoc): User {
  return { id: _id, ...rest };
}

export class UsersRepository {
  private readonly users: Collection<UserDoc>;

  constructor(db: Db) {
    this.users = db.collection<UserDoc>(usersIndexes.collection);
  }

  /**
   * `email` must already be normalised; the unique index settles concurrent sign-ups. `plan` is
   * the operator's DEFAULT_PLAN for new accounts.
   */
  async create(email: string, passwordHash: string, now: Date, plan: PlanId): Promise<User> {
    const doc: UserDoc = {
      _id: newId('usr'),
      email,
      passwordHash,
      plan,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.users.insertOne(doc);
    } catch (err) {
      if (isDuplicateKeyError(err)) throw new EmailTakenError();
      throw err;
    }
    return toUser(doc);
  }

  async findById(userId: string): Promise<User | null> {
    const doc = await this.users.findOne({ _id: userId });
    return doc && toUser(doc);
  }

  /** The accounts that opted in to community indicators. */
  async communityMembers(): Promise<string[]> {
    const docs = await this.users
      .find({ communitySharing: true }, { projection: { _id: 1 } })
      .toArray();
    return docs.map((doc) => doc._id);
  }

  async findByEmail(email: string): Promise<User | null> {
    const doc = await this.users.findOne({ email });
    return doc && toUser(doc);
  }

  async updateSettings(
    userId: string,
    settings: Partial<Pick<User, 'telegramChatId' | 'communitySharing'>>,
    now: Date,
  ): Promise<User | null> {
    // A setting left out stays as it is (an undefined value would be stored as null).
    const given = Object.entries(settings).filter(([, value]) => value !== undefined);
    const doc = await this.users.findOneAndUpdate(
      { _id: userId },
      { $set: { ...Object.fromEntries(given), updatedAt: now } },
      { returnDocument: 'after' },
    );
    return doc && toUser(doc);
  }

  /**
   * Replaces the password hash; with `replacing`, only while the stored hash is still that one (a
   * re-hash at sign-in must not undo a password change that happened meanwhile).
   */
  async setPasswordHash(
    userId: string,
    passwordHash: string,
    now: Date,
    replacing?: string,
  ): Promise<boolean> {
    const filter = replacing ? { _id: userId, passwordHash: replacing } : { _id: userId };
    const { matchedCount } = await this.users.updateOne(filter, {
      $set: { passwordHash, updatedAt: now },
    });
    return matchedCount === 1;
  }

  async setRole(userId: string, role: UserRole, now: Date): Promise<User | null> {
    return this.set(userId, { role }, now);
  }

  async setDisabled(userId: string, disabledAt: Date | null, now: Date): Promise<User | null> {
    return this.set(userId, { disabledAt }, now);
  }

  /** The first step of an erasure: kept when it was already marked (a retry). */
  async markErasing(userId: string, now: Date): Promise<void> {
    await this.users.updateOne(
      { _id: userId, erasingAt: { $exists: false } },
      { $set: { erasingAt: now } },
    );
  }

  /** Accounts whose erasure was asked for and not finished (a crash part-way). */
  async erasing(): Promise<string[]> {
    const docs = await this.users
      .find({ erasingAt: { $gt: new Date(0) } }, { projection: { _id: 1 } })
      .toArray();
    return docs.map((doc) => doc._id);
  }

  /** The last step of an erasure. */
  async remove(userId: string): Promise<void> {
    await this.users.deleteOne({ _id: userId });
  }

  /**
   * Accounts in email order after `after`, those whose email starts with `prefix` (lower case, as
   * stored): a range on the unique email index, however many accounts there are.
   */
  async search(prefix: string, after: string | undefined, limit: number): Promise<User[]> {
    const upper = prefix ? `${prefix}\u{10FFFF}` : undefined;
    const from = after !== undefined && after >= prefix ? { $gt: after } : { $gte: prefix };
    const docs = await this.users
      .find({ email: { ...from, ...(upper && { $lt: upper }) } })
      .sort({ email: 1 })
      .limit(limit)
      .toArray();
    return docs.map(toUser);
  }

  private async set(
    userId: string,
    fields: Partial<Pick<UserDoc, 'role' | 'disabledAt'>>,
    now: Date,
  ): Promise<User | null> {
    const doc = await this.users.findOneAndUpdate(
      { _id: userId },
      { $set: { ...fields, updatedAt: now } },
      { returnDocument: 'after' },
    );
    return doc && toUser(doc);
  }

  async setPlan(userId: string, plan: PlanId, now: Date): Promise<User | null> {
    const doc = await this.users.findOneAndUpdate(
      { _id: userId },
      { $set: { plan, updatedAt: now } },
      { returnDocument: 'after' },
    );
    return doc && toUser(doc);
  }
}
