import {
  MongoBulkWriteError,
  MongoClient,
  MongoServerError,
  TopologyType,
  type AnyBulkWriteOperation,
  type BulkWriteResult,
  type Collection,
  type Db,
  type Document,
  type IndexDescription,
  type TopologyDescriptionChangedEvent,
} from 'mongodb';

/** The indexes one collection needs; each repository module declares its own. */
export interface CollectionIndexes {
  collection: string;
  indexes: (IndexDescription & { name: string })[];
}

export interface Database {
  client: MongoClient;
  db: Db;
}

/** The name the service's connections give the server (its logs and the test suite's index check). */
export const SERVICE_APP_NAME = 'tripwire-service';

export async function connectMongo(
  uri: string,
  dbName: string,
  options: { serverSelectionTimeoutMS?: number; appName?: string; monitorCommands?: boolean } = {},
): Promise<Database> {
  const client = new MongoClient(uri, {
    // While the database is down, requests wait this long before answering 503 (src/http/errors.ts).
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 1_000,
    appName: options.appName ?? SERVICE_APP_NAME,
    monitorCommands: options.monitorCommands ?? false,
  });
  // What the driver found behind the address: a mongos makes it a sharded cluster (`unjournaled`).
  let topology: TopologyType | undefined;
  const found = (event: TopologyDescriptionChangedEvent) => (topology = event.newDescription.type);
  client.on('topologyDescriptionChanged', found);
  await client.connect();
  client.off('topologyDescriptionChanged', found);
  if (topology === TopologyType.Sharded) sharded.add(client);
  return { client, db: client.db(dbName) };
}

/** Clients connected to a sharded cluster, through a mongos. */
const sharded = new WeakSet<MongoClient>();

/**
 * The same database, its writes acknowledged only once journaled (`j: true`): on disk, where a
 * power loss keeps them, rather than in the server's memory (docs/operations.md).
 */
export function journaled(db: Db): Db {
  return db.client.db(db.databaseName, { writeConcern: { j: true } });
}

/**
 * The same database, its writes acknowledged once applied (`w: 1`), not waiting for the journal
 * even where the server's default would (a replica set's `w: "majority"`): for writes that a
 * journaled write right after makes durable with it (the evidence store's, evidence.store.ts).
 * That holds where one journal takes them all; on a sharded cluster each shard journals its own
 * writes, and the evidence records are sharded while their chain heads are not
 * (docs/operations.md), so there these writes are journaled as well.
 */
export function unjournaled(db: Db): Db {
  if (sharded.has(db.client)) return journaled(db);
  return db.client.db(db.databaseName, { writeConcern: { w: 1, journal: false } });
}

/** Idempotent: creates only the declared indexes that are missing by name. */
export async function ensureIndexes(db: Db, specs: readonly CollectionIndexes[]): Promise<void> {
  for (const spec of specs) {
    const present = await indexNames(db, spec.collection);
    const missing = spec.indexes.filter((index) => !present.has(index.name));
    if (missing.length) await db.collection(spec.collection).createIndexes(missing);
  }
}

/** Names of declared indexes that the database does not have, as `collection.index`. */
export async function missingIndexes(
  db: Db,
  specs: readonly CollectionIndexes[],
): Promise<string[]> {
  const missing: string[] = [];
  for (const spec of specs) {
    const present = await indexNames(db, spec.collection);
    for (const index of spec.indexes) {
      if (!present.has(index.name)) missing.push(`${spec.collection}.${index.name}`);
    }
  }
  return missing;
}

async function indexNames(db: Db, collection: string): Promise<Set<string>> {
  try {
    const indexes = (await db.collection(collection).listIndexes().toArray()) as Document[];
    return new Set(indexes.map((index) => String(index.name)));
  } catch (err) {
    if ((err as { code?: number }).code === NAMESPACE_NOT_FOUND) return new Set();
    throw err;
  }
}

const NAMESPACE_NOT_FOUND = 26;

const DUPLICATE_KEY = 11000;

/**
 * An unordered bulk write in which a duplicate key is an answer, not a failure (an upsert or an
 * insert that another writer's document stood in the way of): its result, and the indexes of the
 * operations that met one. Any other error is thrown.
 */
export async function bulkWriteAllowingDuplicates<T extends Document>(
  collection: Collection<T>,
  operations: AnyBulkWriteOperation<T>[],
): Promise<{ result: BulkWriteResult; duplicates: Set<number> }> {
  try {
    return {
      result: await collection.bulkWrite(operations, { ordered: false }),
      duplicates: new Set(),
    };
  } catch (err) {
    if (!(err instanceof MongoBulkWriteError)) throw err;
    const errors = ([] as { code?: number; index: number }[]).concat(err.writeErrors);
    if (!errors.length || errors.some((e) => e.code !== DUPLICATE_KEY)) throw err;
    return { result: err.result, duplicates: new Set(errors.map((e) => e.index)) };
  }
}

/** A unique index (or `_id`) refused the write: how both servers signal "already taken". */
export function isDuplicateKeyError(err: unknown): boolean {
  if (err instanceof MongoBulkWriteError) {
    return ([] as { code?: number }[])
      .concat(err.writeErrors)
      .some((e) => e.code === DUPLICATE_KEY);
  }
  return err instanceof MongoServerError && err.code === DUPLICATE_KEY;
}
