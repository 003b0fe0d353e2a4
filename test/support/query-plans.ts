/**
 * Whether the database answers a query from an index: the embedded server says so through its scan
 * log (`tripwireScans`), MongoDB through `explain` (no collection scan, and no in-memory sort when
 * a sort is asked for).
 */
import type { Db, Document, Sort } from 'mongodb';

interface ScanEntry {
  app: string;
  query: string;
  count: number;
}

/** The embedded server's scan log, or null on a server that has none (MongoDB). */
export async function scanLog(db: Db): Promise<ScanEntry[] | null> {
  try {
    const { scans } = await db.admin().command({ tripwireScans: 1 });
    return scans as ScanEntry[];
  } catch {
    return null;
  }
}

export async function servedByIndex(
  db: Db,
  collection: string,
  filter: Document,
  sort: Sort,
): Promise<boolean> {
  const before = await scanLog(db);
  if (before === null) {
    const plan = JSON.stringify(
      await db.collection(collection).find(filter).sort(sort).limit(1).explain(),
    );
    const sorted = Object.keys(sort).length > 0;
    return !plan.includes('COLLSCAN') && !(sorted && plan.includes('"stage":"SORT"'));
  }
  await db.collection(collection).find(filter).sort(sort).limit(1).toArray();
  const after = (await scanLog(db))!;
  const scans = (log: ScanEntry[]) =>
    log
      .filter((e) => e.query.startsWith(`${db.databaseName}.${collection} `))
      .reduce((sum, e) => sum + e.count, 0);
  return scans(after) === scans(before);
}
