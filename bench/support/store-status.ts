import { MongoServerError, type Db } from 'mongodb';

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

/** `top`'s kinds of command on a collection (mongod's names; `queries` are finds). */
const KINDS = ['queries', 'getmore', 'insert', 'update', 'remove', 'commands'] as const;

/**
 * Commands run so far on each collection of `db`'s database, by kind (`update alert_deliveries`),
 * from MongoDB's `top` command, which mongod and the embedded server both answer; undefined from a
 * server that does not (a mongos, a hosted cluster that refuses it).
 */
export async function commandCounts(db: Db): Promise<Map<string, number> | undefined> {
  const top = await db
    .admin()
    .command({ top: 1 })
    .catch((err: unknown) => {
      if (err instanceof MongoServerError) return undefined;
      throw err;
    });
  if (!top) return undefined;
  const { totals } = top as {
    totals: Record<string, Partial<Record<(typeof KINDS)[number], { count: number }>> | string>;
  };
  const counts = new Map<string, number>();
  const prefix = `${db.databaseName}.`;
  for (const [namespace, kinds] of Object.entries(totals)) {
    if (typeof kinds === 'string' || !namespace.startsWith(prefix)) continue;
    for (const kind of KINDS) {
      const count = kinds[kind]?.count;
      if (count) counts.set(`${kind} ${namespace.slice(prefix.length)}`, count);
    }
  }
  return counts;
}
