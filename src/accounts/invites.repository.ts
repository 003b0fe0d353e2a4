import type { Collection, Db } from 'mongodb';
import type { CollectionIndexes } from '../db/mongo';

/** An invitation for one email address (SIGNUP_MODE=invite); only the code's digest is stored. */
export interface Invite {
  codeHash: string;
  email: string;
  createdAt: Date;
  expiresAt: Date;
}

type InviteDoc = Omit<Invite, 'codeHash'> & { _id: string };

export const invitesIndexes: CollectionIndexes = {
  collection: 'invites',
  // An erasure's lookup of invitations still open for the account's email.
  indexes: [{ key: { email: 1 }, name: 'email' }],
};

export class InvitesRepository {
  private readonly invites: Collection<InviteDoc>;

  constructor(db: Db) {
    this.invites = db.collection<InviteDoc>(invitesIndexes.collection);
  }

  async create({ codeHash, ...rest }: Invite): Promise<void> {
    await this.invites.insertOne({ _id: codeHash, ...rest });
  }

  async isValid(codeHash: string, email: string, now: Date): Promise<boolean> {
    const doc = await this.invites.findOne({ _id: codeHash });
    return !!doc && doc.email === email && doc.expiresAt > now;
  }

  /** Atomic: an invitation admits one sign-up. */
  async consume(codeHash: string, email: string, now: Date): Promise<Invite | null> {
    const doc = await this.invites.findOneAndDelete({
      _id: codeHash,
      email,
      expiresAt: { $gt: now },
    });
    return (
      doc && {
        codeHash: doc._id,
        email: doc.email,
        createdAt: doc.createdAt,
        expiresAt: doc.expiresAt,
      }
    );
  }

  /** Gives an invitation back when the sign-up it admitted failed after all (email taken). */
  async restore(invite: Invite): Promise<void> {
    await this.create(invite);
  }
}
