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

  async findById(trapId: string): Promise<Trap | null> {
    const doc = await this.traps.findOne({ _id: trapId });
    if (!doc) return null;
    const { _id, ...rest } = doc;
    return { id: _id, ...rest };
  }

  async remove(trapId: string): Promise<void> {
    await this.traps.deleteOne({ _id: trapId });
  }
}
