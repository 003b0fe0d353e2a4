import { MongoClient, type Db, type Document, type IndexDescription } from 'mongodb';

/** The indexes one collection needs; each repository module declares its own. */
export interface CollectionIndexes {
  collection: string;
  indexes: (IndexDescription & { name: string })[];
}

export interface Database {
  client: MongoClient;
  db: Db;
}

export async function connectMongo(
  uri: string,
  dbName: string,
  options: { serverSelectionTimeoutMS?: number } = {},
): Promise<Database> {
  const client = new MongoClient(uri, {
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 5_000,
    appName: 'tripwire-service',
  });
  await client.connect();
  return { client, db: client.db(dbName) };
}

/** Idempotent: creating an index that already exists with the same spec is a no-op. */
export async function ensureIndexes(db: Db, specs: readonly CollectionIndexes[]): Promise<void> {
  for (const spec of specs) {
    await db.collection(spec.collection).createIndexes(spec.indexes);
  }
}

/** Names of declared indexes that the database does not have. */
export async function missingIndexes(
  db: Db,
  specs: readonly CollectionIndexes[],
): Promise<string[]> {
  const missing: string[] = [];
  for (const spec of specs) {
    const present = new Set((await listIndexes(db, spec.collection)).map((i) => String(i.name)));
    for (const index of spec.indexes) {
      if (!present.has(index.name)) missing.push(`${spec.collection}.${index.name}`);
    }
  }
  return missing;
}

async function listIndexes(db: Db, collection: string): Promise<Document[]> {
  try {
    return (await db.collection(collection).listIndexes().toArray()) as Document[];
  } catch (err) {
    if ((err as { code?: number }).code === NAMESPACE_NOT_FOUND) return [];
    throw err;
  }
}

const NAMESPACE_NOT_FOUND = 26;
