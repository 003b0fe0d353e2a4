/**
 * The MongoDB behaviour the service relies on, checked against whatever server MONGODB_URI names:
 * the embedded default in `npm test`, or a real MongoDB 7 (`MONGODB_URI=… npx jest test/database`).
 * The durability cases start a local server of their own (the same kind `npm run dev` starts),
 * since they kill it.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import {
  BSON,
  Double,
  Long,
  MongoBulkWriteError,
  MongoClient,
  MongoServerError,
  ObjectId,
  type Db,
  type Document,
} from 'mongodb';
import { commandCounts } from '../../bench/support/store-status';
import { freePort, startLocalMongo, type LocalMongo } from '../../tools/stack';
import { scanLog, servedByIndex } from '../support/query-plans';

const uri = process.env.MONGODB_URI!;
let clients: MongoClient[];
let db: Db;
const dbName = `contract_${process.pid}`;

beforeAll(async () => {
  // Five clients, each with its own connection pool: writes really arrive side by side.
  clients = await Promise.all(Array.from({ length: 5 }, () => MongoClient.connect(uri)));
  db = clients[0]!.db(dbName);
});

afterAll(async () => {
  await db.dropDatabase();
  await Promise.all(clients.map((c) => c.close()));
});

/** The same collection through each of the five clients, round robin. */
function spread<T extends Document>(name: string) {
  const collections = clients.map((c) => c.db(dbName).collection<T>(name));
  return (i: number) => collections[i % collections.length]!;
}

describe('single-document updates', () => {
  it('when 50 $inc arrive at once from 5 clients, then the count is exactly 50', async () => {
    const counters = spread<{ _id: string; n: number }>('incs');
    await counters(0).insertOne({ _id: 'c', n: 0 });
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => counters(i).updateOne({ _id: 'c' }, { $inc: { n: 1 } })),
    );
    expect((await counters(0).findOne({ _id: 'c' }))?.n).toBe(50);
  });

  it('when 50 conditional findOneAndUpdate race for 10 places, then exactly 10 succeed', async () => {
    const counters = spread<{ _id: string; n: number }>('conditional');
    await counters(0).insertOne({ _id: 'c', n: 0 });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        counters(i).findOneAndUpdate(
          { _id: 'c', n: { $lt: 10 } },
          { $inc: { n: 1 } },
          { returnDocument: 'after' },
        ),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(10);
    expect(new Set(results.filter(Boolean).map((d) => d!.n)).size).toBe(10);
    expect((await counters(0).findOne({ _id: 'c' }))?.n).toBe(10);
  });

  it('when an upsert inserts, then $setOnInsert keeps nulls and empty arrays', async () => {
    const docs = db.collection<{ _id: string } & Document>('set_on_insert');
    await docs.updateOne(
      { _id: 'u' },
      { $setOnInsert: { none: null, list: [], nested: { also: null } }, $set: { seen: 1 } },
      { upsert: true },
    );
    expect(await docs.findOne({ _id: 'u' })).toEqual({
      _id: 'u',
      none: null,
      list: [],
      nested: { also: null },
      seen: 1,
    });
  });
});

describe('unique indexes', () => {
  it('when 50 inserts of one key arrive at once from 5 clients, then one wins and 49 get 11000', async () => {
    const users = spread<{ email: string }>('unique_race');
    await users(0).createIndex({ email: 1 }, { unique: true, name: 'email_unique' });
    const settled = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => users(i).insertOne({ email: 'a@example.com' })),
    );
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
    const codes = settled.flatMap((s) =>
      s.status === 'rejected' ? [(s.reason as MongoServerError).code] : [],
    );
    expect(codes).toEqual(Array(49).fill(11000));
    expect(await users(0).countDocuments({ email: 'a@example.com' })).toBe(1);
  });

  it('when the same index is created twice, then the second is a no-op; other options conflict', async () => {
    const docs = db.collection('index_twice');
    const spec = { key: { a: 1, b: -1 }, name: 'a_b', unique: true } as const;
    await docs.createIndexes([spec]);
    await docs.createIndexes([spec]);
    const names = (await docs.listIndexes().toArray()).map((i) => i.name as string);
    expect(names.filter((n) => n === 'a_b')).toHaveLength(1);
    await expect(docs.createIndexes([{ ...spec, unique: false }])).rejects.toBeInstanceOf(
      MongoServerError,
    );
  });

  /** Inserts each document and says, in order, which were refused as duplicates. */
  async function refusals(name: string, docs: Document[]): Promise<boolean[]> {
    const refused: boolean[] = [];
    for (const doc of docs) {
      const insert = db.collection(name).insertOne(doc);
      refused.push(
        await insert.then(
          () => false,
          (err: MongoServerError) => (err.code === 11000 ? true : Promise.reject(err)),
        ),
      );
    }
    return refused;
  }

  it('when a key holds the same number as an int, a long or a double, or nothing along a nested path, then each later one is a duplicate', async () => {
    const docs = db.collection('unique_normal');
    await docs.createIndex({ 'a.b': 1, n: 1 }, { unique: true, name: 'a_b_n' });
    expect(
      await refusals('unique_normal', [
        { a: { b: 'x' }, n: 1 },
        { a: { b: 'x' }, n: Long.fromNumber(1) },
        { a: { b: 'x' }, n: new Double(1) },
        { a: { b: 'x' }, n: 2 },
        { a: 5, n: 1 }, // a plain value on the path: a.b is absent
        { n: 1 },
        { a: { c: 1 }, n: 1 },
      ]),
    ).toEqual([false, true, true, false, false, true, true]);
    expect(await docs.countDocuments({ 'a.b': 'x', n: 1 })).toBe(1);
  });

  it('when a key holds an array, or an array lies on its path, then each element is a key of its own', async () => {
    await db.collection('unique_arrays').createIndex({ 'a.b': 1 }, { unique: true, name: 'a_b' });
    expect(
      await refusals('unique_arrays', [
        { a: { b: ['p', 'q'] } },
        { a: { b: 'q' } },
        { a: [{ b: 'r' }, { b: 's' }] },
        { a: { b: 's' } },
        { a: { b: 't' } },
      ]),
    ).toEqual([false, true, false, true, false]);
  });

  it('when a sparse index meets documents without its keys, then it leaves them out; with them, in a subdocument or in an array of them, they count', async () => {
    await db
      .collection('unique_sparse')
      .createIndex({ 'p.s': 1 }, { unique: true, sparse: true, name: 'p_s' });
    expect(
      await refusals('unique_sparse', [
        { p: {} },
        { q: 1 },
        { p: [{ t: 1 }] },
        { p: { s: 'k' } },
        { p: { s: 'k' } },
        { p: [{ s: 'm' }, { t: 2 }] },
        { p: [{ s: 'm' }] },
      ]),
    ).toEqual([false, false, false, false, true, false, true]);
    expect(await db.collection('unique_sparse').countDocuments({ 'p.s': 'm' })).toBe(1);
  });

  it('when an update changes a key, then the old key is free and the new one taken', async () => {
    const docs = db.collection<{ _id: number; k: string }>('unique_moved');
    await docs.createIndex({ k: 1 }, { unique: true, name: 'k' });
    await docs.insertMany([
      { _id: 1, k: 'old' },
      { _id: 2, k: 'other' },
    ]);
    await docs.updateOne({ _id: 1 }, { $set: { k: 'new' } });
    await expect(docs.updateOne({ _id: 2 }, { $set: { k: 'new' } })).rejects.toMatchObject({
      code: 11000,
    });
    await docs.insertOne({ _id: 3, k: 'old' });
    expect(await docs.find({ k: 'new' }).toArray()).toEqual([{ _id: 1, k: 'new' }]);
  });
});

describe('collection statistics', () => {
  it("when documents are inserted, grown and deleted, then the collection's size follows their BSON size", async () => {
    const embedded = !!(
      (await db.admin().command({ serverStatus: 1 })) as { tripwireStore?: unknown }
    ).tripwireStore;
    // WiredTiger's count is its own (compressed, and updated as it sees fit): the embedded
    // server's is the documents' BSON size, kept exact.
    if (!embedded) return;
    const docs = db.collection<{ _id: number; body: string }>('sized');
    const size = async () => ((await db.command({ collStats: 'sized' })) as { size: number }).size;
    const bsonSize = async () =>
      (await docs.find().toArray()).reduce((sum, doc) => sum + BSON.calculateObjectSize(doc), 0);
    await docs.insertMany(Array.from({ length: 20 }, (_, i) => ({ _id: i, body: 'x'.repeat(i) })));
    expect(await size()).toBe(await bsonSize());
    await docs.updateMany({ _id: { $lt: 10 } }, { $set: { body: 'y'.repeat(100) } });
    expect(await size()).toBe(await bsonSize());
    await docs.deleteMany({ _id: { $gte: 5 } });
    expect(await size()).toBe(await bsonSize());
    await docs.deleteMany({});
    expect(await size()).toBe(0);
  });
});

describe('command counts', () => {
  it("when commands run on a collection, then `top` counts each under its kind, a getMore and a failed insert too, and no other collection's", async () => {
    const counted = db.collection<{ _id: number }>('counted');
    const countsOf = async (collection: string) => {
      const counts = (await commandCounts(db))!;
      const of = (kind: string) => counts.get(`${kind} ${collection}`) ?? 0;
      return {
        insert: of('insert'),
        queries: of('queries'),
        update: of('update'),
        getmore: of('getmore'),
      };
    };
    await counted.insertOne({ _id: 0 });
    const before = await countsOf('counted');
    const elsewhere = await countsOf('sized');
    await counted.insertMany([{ _id: 1 }, { _id: 2 }]);
    await expect(counted.insertOne({ _id: 1 })).rejects.toThrow(MongoServerError);
    await counted.findOne({ _id: 1 });
    // A first batch of one, then the rest by getMore (mongod may need a second to see the end).
    await counted.find({ _id: { $gt: 0 } }, { batchSize: 1 }).toArray();
    await counted.updateOne({ _id: 2 }, { $set: { n: 1 } });

    const after = await countsOf('counted');
    expect({
      insert: after.insert - before.insert,
      queries: after.queries - before.queries,
      update: after.update - before.update,
    }).toEqual({ insert: 2, queries: 2, update: 1 });
    expect(after.getmore - before.getmore).toBeGreaterThanOrEqual(1);
    expect(await countsOf('sized')).toEqual(elsewhere);
  });
});

describe('bulk writes', () => {
  const batch = () => [
    { _id: 'one', k: 1 },
    { _id: 'two', k: 1 },
    { _id: 'three', k: 2 },
    { _id: 'four', k: 3 },
  ];
  type Doc = { _id: string; k: number };

  async function failedInsert(name: string, ordered: boolean): Promise<MongoBulkWriteError> {
    const docs = db.collection<Doc>(name);
    await docs.createIndex({ k: 1 }, { unique: true, name: 'k_unique' });
    const err: unknown = await docs.insertMany(batch(), { ordered }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MongoBulkWriteError);
    return err as MongoBulkWriteError;
  }

  it('when an ordered insert meets a duplicate, then it stops there and says which and how many', async () => {
    const err = await failedInsert('bulk_ordered', true);
    expect(err.insertedCount).toBe(1);
    const errors = ([] as { index: number; code: number }[]).concat(err.writeErrors as never);
    expect(errors.map((e) => [e.index, e.code])).toEqual([[1, 11000]]);
    const ids = await db.collection<Doc>('bulk_ordered').distinct('_id');
    expect(ids.sort()).toEqual(['one']);
  });

  it('when an unordered insert meets a duplicate, then only that document is left out', async () => {
    const err = await failedInsert('bulk_unordered', false);
    expect(err.insertedCount).toBe(3);
    const errors = ([] as { index: number; code: number }[]).concat(err.writeErrors as never);
    expect(errors.map((e) => [e.index, e.code])).toEqual([[1, 11000]]);
    const ids = await db.collection<Doc>('bulk_unordered').distinct('_id');
    expect(ids.sort()).toEqual(['four', 'one', 'three']);
  });
});

describe('reads', () => {
  type Event = { _id: string; account: string; at: number };
  const events = () => db.collection<Event>('events');

  beforeAll(async () => {
    await events().createIndex({ account: 1, at: -1 }, { name: 'account_at' });
    const docs = Array.from({ length: 3000 }, (_, i) => ({
      _id: `e${String(i).padStart(5, '0')}`,
      account: `a${i % 3}`,
      at: (i * 7919) % 3000,
    }));
    await events().insertMany(docs);
  });

  it('when a page is read newest first, then sort + limit comes from the index', async () => {
    const filter = { account: 'a1', at: { $lt: 2000 } };
    const page = await events().find(filter).sort({ at: -1 }).limit(5).toArray();
    const expected = (await events().find({ account: 'a1' }).toArray())
      .filter((e) => e.at < 2000)
      .sort((x, y) => y.at - x.at)
      .slice(0, 5);
    expect(page).toEqual(expected);
    expect(await servedByIndex(db, 'events', filter, { at: -1 })).toBe(true);
    // The same query walked the other way is served from the index too.
    expect(await servedByIndex(db, 'events', filter, { at: 1 })).toBe(true);
  });

  it('when documents are counted under a filter, then the count is right and read through the index', async () => {
    const before = await scanLog(db);
    expect(await events().countDocuments({ account: 'a1', at: { $lt: 1500 } })).toBe(500);
    if (before) expect(await scanLog(db)).toEqual(before);
  });

  it('when the count and distinct commands and a $lookup take more matches than a first batch holds, then they answer for every one', async () => {
    // Through the index, then through no index: each once more than a find's first batch (101).
    for (const query of [{ account: 'a1' }, { at: { $gte: 1500 } }]) {
      const matching = (await events().find(query).toArray()).length;
      expect(matching).toBeGreaterThan(101);
      expect((await db.command({ count: 'events', query })).n).toBe(matching);
      expect((await db.command({ count: 'events', query, skip: 10, limit: 500 })).n).toBe(500);
      expect(await events().distinct('_id', query)).toHaveLength(matching);
    }
    // A `$lookup` reads its matches the same way: 1,000 events an account, through the index.
    await db.collection('lookup_accounts').insertMany([{ _id: 'a1' }, { _id: 'a2' }] as never[]);
    const joined = await db
      .collection('lookup_accounts')
      .aggregate<{ _id: string; events: unknown[] }>([
        { $lookup: { from: 'events', localField: '_id', foreignField: 'account', as: 'events' } },
        { $sort: { _id: 1 } },
      ])
      .toArray();
    expect(joined.map((account) => account.events.length)).toEqual([1000, 1000]);
  });

  it('when a query filters on a field no index covers, then the check says so', async () => {
    expect(await servedByIndex(db, 'events', { at: 5 }, {})).toBe(false);
  });

  it('when a cursor streams 1,000 documents in batches of 50, then each arrives once, in order', async () => {
    const seen: number[] = [];
    const cursor = events().find({ account: 'a2' }).sort({ at: -1 }).batchSize(50);
    for await (const event of cursor) seen.push(event.at);
    expect(seen).toHaveLength(1000);
    expect(seen).toEqual([...seen].sort((x, y) => y - x));
  });

  it('when a range over an array field matches a document by two elements, then it arrives once', async () => {
    const tagged = db.collection<{ _id: number; tags: string[] }>('tagged');
    await tagged.createIndex({ tags: 1 });
    await tagged.insertMany([
      { _id: 1, tags: ['a', 'b'] },
      { _id: 2, tags: ['c'] },
    ]);
    const found = await tagged.find({ tags: { $gte: 'a' } }).toArray();
    expect(found.map((doc) => doc._id).sort()).toEqual([1, 2]);
  });

  it("when documents change between a cursor's batches, then later batches read them as they are, and limit and projection hold", async () => {
    type Row = { _id: number; g: string; n: number; x: string };
    const rows = db.collection<Row>('batches');
    await rows.createIndex({ g: 1, n: 1 });
    await rows.insertMany(Array.from({ length: 100 }, (_, n) => ({ _id: n, g: 'a', n, x: 'x' })));
    const cursor = rows
      .find({ g: 'a' }, { projection: { n: 1 } })
      .sort({ n: 1 })
      .limit(60)
      .batchSize(10);
    const seen: Partial<Row>[] = [];
    for (let i = 0; i < 10; i++) seen.push((await cursor.next())!);
    await rows.deleteOne({ _id: 15 });
    await rows.insertOne({ _id: 1000, g: 'a', n: 20.5, x: 'x' });
    for await (const row of cursor) seen.push(row);
    // 15 deleted ahead of the cursor, 20.5 inserted ahead of it; 60 in all.
    const expected = [...Array(61).keys()].filter((n) => n !== 15);
    expected.splice(20, 0, 20.5);
    expect(seen.map((row) => row.n)).toEqual(expected.slice(0, 60));
    expect(seen.every((row) => Object.keys(row).sort().join() === '_id,n')).toBe(true);
  });
});

/**
 * A server of the block's own, in a data folder of its own, which `prepare` fills before the first
 * start; `killAndRestart` SIGKILLs it and starts it again on the same folder. A server that exits
 * on its own prints what it wrote (its warnings and errors: an out-of-memory exit says so).
 */
function ownServer(prefix: string, prepare?: (dataDir: string) => Promise<void>) {
  const own = {
    dataDir: '',
    server: undefined as unknown as LocalMongo,
    client: undefined as unknown as MongoClient,
    /** Set while this test ends the server itself. */
    ending: false,
    /**
     * A restart still under way: a test that timed out during one must not leave afterAll to
     * close the client it replaced while the new one connects.
     */
    restarting: Promise.resolve(),
    async start() {
      const lines: string[] = [];
      own.server = await startLocalMongo({
        dataDir: own.dataDir,
        port: await freePort(),
        log: (line) => lines.push(line),
      });
      void own.server.process.exited.then((code) => {
        if (!own.ending)
          console.error(`the database server exited (code ${code}):\n${lines.join('\n')}`);
      });
      own.client = await MongoClient.connect(own.server.address);
    },
    killAndRestart() {
      own.restarting = (async () => {
        own.ending = true;
        process.kill(-own.server.process.child.pid!, 'SIGKILL');
        await own.server.process.exited;
        own.ending = false;
        await own.client.close(true);
        await own.start();
      })();
      return own.restarting;
    },
  };
  beforeAll(async () => {
    own.dataDir = await mkdtemp(join(tmpdir(), prefix));
    await prepare?.(own.dataDir);
    await own.start();
  });
  afterAll(async () => {
    await own.restarting.catch(() => undefined);
    await own.client.close(true);
    own.ending = true;
    await own.server.stop();
    await rm(own.dataDir, { recursive: true, force: true });
  });
  return own;
}

describe('durability', () => {
  const own = ownServer('contract-durable-');

  /** Syncs of the database's journal so far: the embedded server's own count, or WiredTiger's. */
  async function syncs(): Promise<number> {
    const status = (await own.client.db('admin').command({ serverStatus: 1 })) as {
      tripwireStore?: { syncs: number };
      wiredTiger?: { log: Record<string, number> };
    };
    return status.tripwireStore?.syncs ?? status.wiredTiger!.log['log sync operations']!;
  }

  it('when writes ask for the journal, then each is synced before it is acknowledged; plain ones are not', async () => {
    const docs = own.client.db('durable').collection<{ _id: number }>('synced');
    const before = await syncs();
    for (let i = 0; i < 30; i++)
      await docs.insertOne({ _id: i }, { writeConcern: { journal: true } });
    const journaled = (await syncs()) - before;
    expect(journaled).toBeGreaterThanOrEqual(30);

    const plainBefore = await syncs();
    for (let i = 30; i < 130; i++) await docs.insertOne({ _id: i });
    // Plain writes reach the disk in the background, a few times a second, not one sync each.
    expect((await syncs()) - plainBefore).toBeLessThan(50);
  });

  it('when the embedded server is SIGKILLed right after acknowledging plain writes, then every one is kept with its index entries', async () => {
    // mongod may lose the last 100 ms of writes sent without `j` (its journal's commit interval)
    // when killed; the embedded server keeps every acknowledged one (docs/operations.md).
    if (!own.server.description.startsWith('embedded')) return;
    type Doc = { _id: number; n: number };
    const docs = own.client.db('durable').collection<Doc>('plain');
    await docs.createIndex({ n: 1 });
    const expected = new Map<number, Doc>();
    for (let i = 0; i < 300; i++) {
      await docs.insertOne({ _id: i, n: i });
      expected.set(i, { _id: i, n: i });
      if (i % 3 === 0) {
        await docs.updateOne({ _id: i }, { $set: { n: 1000 + i } });
        expected.set(i, { _id: i, n: 1000 + i });
      }
      if (i % 5 === 4) {
        await docs.deleteOne({ _id: i - 2 });
        expected.delete(i - 2);
      }
    }
    // `j: false` writes are kept once a plain write follows them.
    const unjournaled = { writeConcern: { w: 1, journal: false } };
    await docs.insertMany(
      [
        { _id: 1000, n: 5000 },
        { _id: 1001, n: 5001 },
      ],
      unjournaled,
    );
    await docs.insertOne({ _id: 1002, n: 5002 });
    for (const id of [1000, 1001, 1002]) expected.set(id, { _id: id, n: id + 4000 });
    await own.killAndRestart();
    const again = own.client.db('durable').collection<Doc>('plain');
    const all = [...expected.values()].sort((a, b) => a._id - b._id);
    expect(await again.find().sort({ _id: 1 }).toArray()).toEqual(all);
    // The index came back in step: every document under its own key, in key order, and nothing else.
    const byN = await again
      .find({ n: { $gte: 0 } })
      .sort({ n: 1 })
      .toArray();
    expect(byN).toEqual([...all].sort((a, b) => a.n - b.n));
    expect(
      await servedByIndex(own.client.db('durable'), 'plain', { n: { $gte: 0 } }, { n: 1 }),
    ).toBe(true);
    // And the `_id` index: a kept `_id` is refused again, a deleted one taken.
    await expect(again.insertOne({ _id: 1, n: 1 })).rejects.toMatchObject({ code: 11000 });
    await again.insertOne({ _id: 2, n: 2 });
  }, 120_000);

  it('when the database process is SIGKILLed right after acknowledging journaled writes, then none is lost', async () => {
    const docs = own.client.db('durable').collection<{ _id: number; n: number }>('docs');
    const journal = { writeConcern: { journal: true } };
    await docs.createIndex({ n: 1 });
    await docs.insertOne({ _id: 0, n: 0 }, journal);
    for (let i = 1; i <= 200; i++) {
      await docs.insertOne({ _id: i, n: i }, journal);
      await docs.updateOne({ _id: 0 }, { $inc: { n: 1 } }, journal);
    }
    await own.killAndRestart();
    const again = own.client.db('durable').collection<{ _id: number; n: number }>('docs');
    expect(await again.countDocuments()).toBe(201);
    expect((await again.findOne({ _id: 0 }))?.n).toBe(200);
    // The index on n came back in step with the documents: the one $inc'd 200 times is under 200.
    const top = await again
      .find({ n: { $gte: 199 } })
      .sort({ n: 1, _id: 1 })
      .toArray();
    expect(top.map((d) => d._id)).toEqual([199, 0, 200]);
    expect(await servedByIndex(own.client.db('durable'), 'docs', { n: { $gte: 199 } }, {})).toBe(
      true,
    );
    // 400 synced writes, then a JVM killed and started again, on a machine that may be loaded.
  }, 120_000);
});

describe('the store file', () => {
  const own = ownServer('contract-file-');

  const fileBytes = async () =>
    (
      (await own.client.db('admin').command({ serverStatus: 1 })) as {
        tripwireStore: { fileBytes: number };
      }
    ).tripwireStore.fileBytes;

  it('when most of a collection is deleted and writes stop, then the file is cut back to the documents left and its slack', async () => {
    // mongod reuses its files' free space rather than giving it back.
    if (!own.server.description.startsWith('embedded')) return;
    const docs = own.client.db('file').collection<{ _id: number; pad: string }>('churn');
    const pad = 'x'.repeat(1000);
    for (let i = 0; i < 60_000; i += 2000) {
      await docs.insertMany(Array.from({ length: 2000 }, (_, k) => ({ _id: i + k, pad })));
    }
    // The store commits once a second: the inserts are in the file within a few.
    let full = await fileBytes();
    for (const until = Date.now() + 10_000; full <= 50 << 20 && Date.now() < until;) {
      await sleep(250);
      full = await fileBytes();
    }
    expect(full).toBeGreaterThan(50 << 20);
    await docs.deleteMany({ _id: { $gte: 1000 } });
    // 1,000 documents of about 1 KB are left (about 2 MB of store), and the file keeps up to
    // 16 MB free for later writes (GroupCommit.SLACK_BYTES). The quiet store compacts once a
    // second (a few seconds cut it here); 40 s is only the bound of the wait.
    const cut = 20 << 20;
    let file = full;
    for (const until = Date.now() + 40_000; file > cut && Date.now() < until;) {
      await sleep(500);
      file = await fileBytes();
    }
    expect(file).toBeLessThanOrEqual(cut);
    expect(await docs.countDocuments()).toBe(1000);
  }, 90_000);
});

describe('commands over more documents than the database server holds in memory at once', () => {
  // The embedded server starts on an empty store with its smallest heap (256 MB, most of it page
  // cache); these 100,000 documents take about 100 MB as BSON and several times that decoded.
  const own = ownServer('contract-large-');
  const count = 100_000;
  type Doc = { _id: number; k: number; v: number; pad: string };
  const docs = () => own.client.db('large').collection<Doc>('docs');
  const pad = 'x'.repeat(1000);

  beforeAll(async () => {
    await docs().createIndex({ k: 1 });
    for (let i = 0; i < count; i += 2000) {
      await docs().insertMany(
        Array.from({ length: 2000 }, (_, n) => ({ _id: i + n, k: (i + n) % 1000, v: 1, pad })),
      );
    }
  }, 120_000);

  it('when a find walks every document through an index, batch by batch, then each arrives once, in order, and the server stays up', async () => {
    const pid = own.server.pid;
    let read = 0;
    let last = -1;
    const ids = new Set<number>();
    for await (const doc of docs()
      .find({ k: { $gte: 0 } })
      .sort({ k: 1 })
      .batchSize(500)) {
      if (doc.k < last) throw new Error(`out of order: ${doc.k} after ${last}`);
      last = doc.k;
      ids.add(doc._id);
      read++;
    }
    expect(read).toBe(count);
    expect(ids.size).toBe(count);
    expect(own.server.pid).toBe(pid);
  }, 240_000);

  it('when a find no index serves walks every document, batch by batch, then each arrives once, a skip passes over its share, and the server stays up', async () => {
    const pid = own.server.pid;
    const ids = new Set<number>();
    for await (const doc of docs().find({ v: 1 }).batchSize(500)) ids.add(doc._id);
    expect(ids.size).toBe(count);
    let after = 0;
    for await (const doc of docs().find({}).skip(60_000)) {
      expect(doc._id).toBeGreaterThanOrEqual(0);
      after++;
    }
    expect(after).toBe(count - 60_000);
    expect(own.server.pid).toBe(pid);
  }, 240_000);

  it("when a sort no index serves asks for a few documents, then it holds only those; asked for all of them, the embedded server refuses it with MongoDB's error, and stays up", async () => {
    const pid = own.server.pid;
    const firstThree = await docs().find({}).sort({ v: 1, _id: -1 }).limit(3).toArray();
    expect(firstThree.map((doc) => doc._id)).toEqual([count - 1, count - 2, count - 3]);
    const skipped = await docs().find({}).sort({ v: -1 }).skip(10).limit(2).toArray();
    expect(skipped.map((doc) => doc._id)).toEqual([10, 11]); // ties keep the store's order
    if (own.server.description.startsWith('embedded')) {
      // MongoDB sorts what passes its memory limit on disk; the embedded server has no such sort.
      const refused = { code: 292, codeName: 'QueryExceededMemoryLimitNoDiskUseAllowed' };
      await expect(docs().find({}).sort({ v: 1 }).toArray()).rejects.toMatchObject(refused);
      await expect(
        docs()
          .aggregate([{ $sort: { v: 1 } }])
          .toArray(),
      ).rejects.toMatchObject(refused);
    }
    const groups = await docs()
      .aggregate([{ $group: { _id: '$k', n: { $sum: 1 } } }, { $sort: { _id: 1 } }])
      .toArray();
    expect(groups).toHaveLength(1000);
    expect(groups[0]).toEqual({ _id: 0, n: count / 1000 });
    expect(own.server.pid).toBe(pid);
  }, 240_000);

  it('when one update, count and delete each take every document, then each completes and the server stays up', async () => {
    const pid = own.server.pid;
    const updated = await docs().updateMany({}, { $set: { v: 2, pad: pad + pad } });
    expect(updated.modifiedCount).toBe(count);
    // Walking the `k` index while moving each document further along it changes each once.
    const moved = await docs().updateMany({ k: { $lt: 500 } }, { $inc: { k: 1000 } });
    expect(moved.modifiedCount).toBe(count / 2);
    expect(await docs().countDocuments({ k: { $gte: 1000 } })).toBe(count / 2);
    expect(await docs().countDocuments({ k: { $gte: 2000 } })).toBe(0);
    expect(await docs().countDocuments({ v: 2 })).toBe(count);
    const deleted = await docs().deleteMany({ _id: { $mod: [2, 0] } });
    expect(deleted.deletedCount).toBe(count / 2);
    expect(await docs().countDocuments({})).toBe(count / 2);
    expect(own.server.pid).toBe(pid);
  }, 240_000);

  it('when the server is SIGKILLed in the middle of such an update, then each document is kept whole: old or new, with its index entries', async () => {
    const left = await docs().countDocuments({});
    const update = docs()
      .updateMany({}, { $set: { v: 3 }, $inc: { k: 10_000 } })
      .catch(() => undefined);
    // Into the update: the first of the documents are changed, the last not yet.
    await sleep(1500);
    await own.killAndRestart();
    await update;
    const changed = await docs().countDocuments({ v: 3 }); // no index: read from the documents
    expect(await docs().countDocuments({})).toBe(left);
    expect(await docs().countDocuments({ k: { $gte: 10_000 } })).toBe(changed); // through the index
    expect(await docs().countDocuments({ k: { $lt: 10_000 } })).toBe(left - changed);
  }, 240_000);
});

describe('pages waiting for a commit', () => {
  // Changed pages stay in the heap beside the full page cache until a commit serializes them into
  // one buffer. At the smallest heap (256 MB), bulk inserts on several connections left 50 MB of
  // them for the periodic commit, which ran the heap out (GroupCommit.UNSAVED_BYTES).
  const own = ownServer('contract-unsaved-');
  const docs = () =>
    own.client.db('bulk').collection<{ _id: number; k: number; pad: string }>('docs');

  it('when four connections insert 300 MB as fast as they can, then fewer than 8 MB of changed pages wait for a commit and the server stays up with every document', async () => {
    const status = async () =>
      (
        (await own.client.db('admin').command({ serverStatus: 1 })) as {
          tripwireStore?: { unsavedBytes: number };
        }
      ).tripwireStore;
    if (!(await status())) return; // mongod: WiredTiger bounds its own dirty cache
    const pid = own.server.pid;
    await docs().createIndex({ k: 1 });
    const pad = 'x'.repeat(10_000);
    const total = 30_000;
    const batch = 200; // 2 MB a command
    let most = 0;
    let inserting = true;
    const watching = (async () => {
      while (inserting) {
        most = Math.max(most, (await status())!.unsavedBytes);
        await sleep(20);
      }
    })();
    await Promise.all(
      [0, 1, 2, 3].map(async (connection) => {
        for (let from = connection * batch; from < total; from += 4 * batch) {
          await docs().insertMany(
            Array.from({ length: batch }, (_, n) => ({ _id: from + n, k: (from + n) % 1000, pad })),
          );
        }
      }),
    );
    inserting = false;
    await watching;
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThan(8 * 2 ** 20);
    expect(await docs().countDocuments({})).toBe(total);
    expect(own.server.pid).toBe(pid);
  }, 240_000);
});

describe('the page cache', () => {
  // An index entry of a long random string (a content hash is 64 characters) takes several times
  // a reference's size. The page cache must count it so (`KeyCodec.memory`), or it holds several
  // times its budget, and the smallest heap (256 MB) runs out while these 240,000 entries of 512
  // characters go in.
  const own = ownServer('contract-cache-');
  const count = 60_000;
  const fields = ['a', 'b', 'c', 'd'] as const;
  type Doc = { _id: number } & Record<(typeof fields)[number], string>;
  const docs = () => own.client.db('cache').collection<Doc>('docs');
  const key = () => randomBytes(256).toString('hex');

  it('when indexes of long random keys outgrow the heap, then the page cache stays within it and the server stays up, answering through them', async () => {
    const pid = own.server.pid;
    for (const field of fields) await docs().createIndex({ [field]: 1 });
    let last = '';
    for (let i = 0; i < count; i += 1000) {
      const batch = Array.from({ length: 1000 }, (_, n): Doc => ({
        _id: i + n,
        a: key(),
        b: key(),
        c: key(),
        d: key(),
      }));
      last = batch[999]!.d;
      await docs().insertMany(batch);
    }
    expect(await docs().countDocuments({ d: last })).toBe(1);
    expect(own.server.pid).toBe(pid);
  }, 240_000);
});

describe('a store written by an earlier embedded server', () => {
  // test/fixtures/store-before-key-codec: the embedded server as it was before its keys had their
  // own codec (tools/mongo-server's KeyCodec; H2's object type wrote them) took 300 events and 100
  // objects, committed them, then took 20 more events, an update and a delete with `j: true`, and
  // was SIGKILLed: those are only in its redo log, framed the old way too.
  type Event = { _id: string; account: string; seq: number; at: Date; name: string; flag: boolean };
  const event = (i: number): Event => ({
    _id: `evt_${String(i).padStart(4, '0')}`,
    account: `acc_${i % 3}`,
    seq: i,
    at: new Date(Date.UTC(2026, 0, 1) + i * 60_000),
    name: i % 4 === 0 ? `café ☃ ${i}` : `name ${i}`,
    flag: i % 2 === 0,
  });
  const objectId = (i: number) => new ObjectId(`6650${String(i).padStart(20, '0')}`);

  const own = ownServer('contract-earlier-store-', async (dataDir) => {
    const folder = join(dataDir, 'mongo-server');
    await mkdir(folder, { recursive: true });
    for (const file of ['data.mv.db', 'data.redo']) {
      const fixture = join(__dirname, '../fixtures/store-before-key-codec', `${file}.gz`);
      await writeFile(join(folder, file), gunzipSync(await readFile(fixture)));
    }
  });

  /** Every read the fixture's data answers, each through the index that serves it. */
  async function expectEveryRead(added: Event[]) {
    const db = own.client.db('fixture');
    const events = db.collection<Event>('events');
    const expected = [...Array.from({ length: 320 }, (_, i) => event(i)), ...added]
      .filter((e) => e._id !== 'evt_0002')
      .map((e) => (e._id === 'evt_0001' ? { ...e, name: 'renamed ü', seq: 1001 } : e));
    expect(await events.find().sort({ _id: 1 }).toArray()).toEqual(expected);
    expect(await events.findOne({ _id: 'evt_0310' })).toEqual(event(310));

    const account1 = expected.filter((e) => e.account === 'acc_1').sort((a, b) => a.seq - b.seq);
    expect(await events.find({ account: 'acc_1' }).sort({ seq: 1 }).toArray()).toEqual(account1);
    expect(await servedByIndex(db, 'events', { account: 'acc_1' }, { seq: 1 })).toBe(true);

    const since = new Date(Date.UTC(2026, 0, 1) + 250 * 60_000);
    const newest = expected.filter((e) => e.at >= since).sort((a, b) => +b.at - +a.at);
    expect(
      await events
        .find({ at: { $gte: since } })
        .sort({ at: -1 })
        .toArray(),
    ).toEqual(newest);
    expect(await servedByIndex(db, 'events', { at: { $gte: since } }, { at: -1 })).toBe(true);

    // Names that are not ASCII, written the old way and (by a later write) the new.
    for (const name of ['café ☃ 8', 'café ☃ 316', 'renamed ü', 'naïve ✓ 9000']) {
      const named = expected.filter((e) => e.name === name);
      expect(await events.find({ name }).toArray()).toEqual(named);
      expect(await servedByIndex(db, 'events', { name }, {})).toBe(true);
    }

    const objects = db.collection<{ _id: ObjectId; owner: string; score: number }>('objects');
    expect(await objects.findOne({ _id: objectId(42) })).toEqual({
      _id: objectId(42),
      owner: 'y',
      score: 10.5,
    });
    const top = await objects.find({ owner: 'x' }).sort({ score: -1 }).limit(3).toArray();
    expect(top.map((o) => o.score)).toEqual([24.75, 24.25, 23.75]);
    expect(await servedByIndex(db, 'objects', { owner: 'x' }, { score: -1 })).toBe(true);
  }

  it('when it is opened, then its documents, index entries and logged writes are all read, and later writes go in beside them', async () => {
    if (!own.server.description.startsWith('embedded')) return;
    await expectEveryRead([]);

    const events = own.client.db('fixture').collection<Event>('events');
    // The unique index still finds the keys written the old way.
    await expect(events.insertOne({ ...event(5), _id: 'evt_copy' })).rejects.toMatchObject({
      code: 11000,
    });
    await expect(events.insertOne(event(7))).rejects.toMatchObject({ code: 11000 });
    const added = [{ ...event(9000), name: 'naïve ✓ 9000' }, event(9001)];
    for (const e of added) await events.insertOne(e, { writeConcern: { journal: true } });
    await expectEveryRead(added);

    // Killed again: the new writes come back from the log, the old ones from the store.
    await own.killAndRestart();
    await expectEveryRead(added);
  });
});
