import type { Collection, Db } from 'mongodb';
import type { CollectionIndexes } from '../db/mongo';
import { newId } from '../ids';

export const TRAP_KINDS = ['endpoint', 'credentials'] as const;
export type TrapKind = (typeof TRAP_KINDS)[number];

/** A honeypot trap: a decoy endpoint or credential set, each decoy a canary of the account. */
export interface Trap {
  id: string;
  accountId: string;
  name: string;
  kind: TrapKind;
  canaryIds: string[];
  createdAt: Date;
}

type TrapDoc = Omit<Trap, 'id'> & { _id: string };

export const trapsIndexes: CollectionIndexes = {
  collection: 'honeypot_traps',
  indexes: [{ key: { accountId: 1, createdAt: -1 }, name: 'account_newest_first' }],
};

/** Every read and write of a trap names its account: another account's trap is not there. */
export class TrapsRepository {
  private readonly traps: Collection<TrapDoc>;

  constructor(db: Db) {
    this.traps = db.collection<TrapDoc>(trapsIndexes.collection);
  }

  async create(fields: Omit<Trap, 'id' | 'createdAt'>, now: Date): Promise<Trap> {
    const doc: TrapDoc = { _id: newId('trp'), ...fields, createdAt: now };
    await this.traps.insertOne(doc);
    return { id: doc._id, ...fields, createdAt: now };
  }

  async list(accountId: string): Promise<Trap[]> {
    const docs = await this.traps.find({ accountId }).sort({ createdAt: -1 }).toArray();
    return docs.map(({ _id, ...rest }) => ({ id: _id, ...rest }));
  }

  async find(accountId: string, trapId: string): Promise<Trap | null> {
    const doc = await this.traps.findOne({ _id: trapId, accountId });
    if (!doc) return null;
    const { _id, ...rest } = doc;
    return { id: _id, ...rest };
  }

  /** Unscoped, and only the owner: for the 404-versus-403 answer when `find` finds nothing. */
  async ownerOf(trapId: string): Promise<string | null> {
    const doc = await this.traps.findOne({ _id: trapId }, { projection: { accountId: 1 } });
    return doc?.accountId ?? null;
  }

  async remove(accountId: string, trapId: string): Promise<boolean> {
    return (await this.traps.deleteOne({ _id: trapId, accountId })).deletedCount === 1;
  }
}
