import type { Collection, Db } from 'mongodb';
import type { CollectionIndexes } from '../db/mongo';

/** A browser that signed in to one account: the digest of its device cookie, and until when. */
interface KnownDeviceDoc {
  /** SHA-256 digest of the cookie value; the value itself is never stored. */
  _id: string;
  /** The account name it signed in to, as its throttle key (`account:<digest>`). */
  account: string;
  expiresAt: Date;
}

/** Read and written by `_id` only: no further index. */
export const knownDevicesIndexes: CollectionIndexes = {
  collection: 'known_devices',
  // An erasure's lookup of the devices that signed in to the account.
  indexes: [{ key: { account: 1 }, name: 'account' }],
};

export class KnownDevicesRepository {
  private readonly devices: Collection<KnownDeviceDoc>;

  constructor(db: Db) {
    this.devices = db.collection<KnownDeviceDoc>(knownDevicesIndexes.collection);
  }

  /** The account key the device signed in to, while its cookie has not expired. */
  async accountOf(digest: string, now: Date): Promise<string | undefined> {
    const doc = await this.devices.findOne({ _id: digest, expiresAt: { $gt: now } });
    return doc?.account;
  }

  async remember(digest: string, account: string, expiresAt: Date): Promise<void> {
    await this.devices.insertOne({ _id: digest, account, expiresAt });
  }
}
