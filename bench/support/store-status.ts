import type { Db } from 'mongodb';

/** The embedded server's own counters, as its `serverStatus` gives them (`tripwireStore`). */
export interface StoreStatus {
  /** Synced commits so far, each an fsync of the store's file. */
  syncs: number;
  cacheMB: number;
  cacheUsedMB: number;
  fileBytes: number;
  fileFillPercent: number;
  chunksFillPercent: number;
}

/** The embedded server's store counters; undefined from a server without them (`mongod`). */
export async function storeStatus(db: Db): Promise<StoreStatus | undefined> {
  const status = await db.admin().command({ serverStatus: 1 });
  return (status as { tripwireStore?: StoreStatus }).tripwireStore;
}
