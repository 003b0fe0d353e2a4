import { ALL_INDEXES } from '../../src/db/indexes';
import { connectMongo, ensureIndexes, missingIndexes, type Database } from '../../src/db/mongo';
import { testConfig } from '../support/test-app';

let mongo: Database;

beforeAll(async () => {
  const config = testConfig();
  mongo = await connectMongo(config.MONGODB_URI, config.MONGODB_DB);
});
afterAll(async () => {
  await mongo.db.dropDatabase();
  await mongo.client.close();
});

describe('index set-up at start', () => {
  it('when the database is new, then every declared index is created', async () => {
    expect(await missingIndexes(mongo.db, ALL_INDEXES)).not.toEqual([]);
    await ensureIndexes(mongo.db, ALL_INDEXES);
    expect(await missingIndexes(mongo.db, ALL_INDEXES)).toEqual([]);
  });

  it('when the service restarts on the same database, then set-up runs again without error', async () => {
    await ensureIndexes(mongo.db, ALL_INDEXES);
    await ensureIndexes(mongo.db, ALL_INDEXES);
    expect(await missingIndexes(mongo.db, ALL_INDEXES)).toEqual([]);
  });

  it('when one index was dropped, then set-up restores just that one', async () => {
    await mongo.db.collection('sessions').dropIndex('refresh_hash_unique');
    expect(await missingIndexes(mongo.db, ALL_INDEXES)).toEqual(['sessions.refresh_hash_unique']);
    await ensureIndexes(mongo.db, ALL_INDEXES);
    expect(await missingIndexes(mongo.db, ALL_INDEXES)).toEqual([]);
  });
});
