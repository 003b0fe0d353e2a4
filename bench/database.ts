/**
 * The store under the service, measured from outside with the plain `mongodb` driver against the
 * local server `tools/stack.ts` starts (the embedded MongoDB-wire server, or `mongod` when on PATH),
 * and PostgreSQL 15 as the reference on the same operations in the same run: a throw-away cluster
 * on a free port, fsync on, one commit per statement, over loopback TCP.
 *
 *   npm run bench:database -- [--sizes 1000,10000,100000] [--writes 20000] [--reads 1000]
 *                             [--blocks 5] [--warmup 5000] [--idle 15] [--bulk 0] [--soak 0]
 *                             [--data-dir .data/bench-database]
 *
 * 1. Writes: `--writes` single inserts of 275-byte documents (random `_id`s), then one `$inc` of
 *    each, every one acknowledged only once on disk (`j: true`; PostgreSQL: a synced commit). The
 *    store's size after each phase and after `--idle` seconds without writes, against the logical
 *    data (the documents' BSON bytes), the bytes the server process wrote to the disk per call, and
 *    each call's CPU in the server (the embedded server's whole process; PostgreSQL's backend) and
 *    in this client.
 *    Then one more `$inc` of each without `j` (PostgreSQL: `synchronous_commit=off`), the plain
 *    write most of the service's are. `--warmup` writes of each kind go first, in a collection
 *    dropped before the measured ones.
 * 2. Open: each size's data in a folder of its own (filled once and kept), the server started
 *    again: time from the start to the first answered read.
 * 3. Reads, taking turns call by call between the two engines and the smallest and the largest
 *    size (so a change in the shared machine's load falls on all four alike): by `_id` and by a
 *    secondary index (`account`, `seq`), each drawn uniformly from the whole collection, and the
 *    hot case (the same document again and again) as a second row, and a round trip that reads
 *    nothing (`ping`; `SELECT 1`): the floor each engine's client and loopback set. Before they
 *    are measured, `--warmup` unmeasured calls of each (a fresh JVM compiles its hot paths over
 *    the first thousands), after the store has finished compacting what filling it left behind.
 *    The `--reads` calls of each come in `--blocks` blocks, every read's turn once per block; the
 *    large / small ratio is the median of the blocks' p50 ratios (a spell of load falls on one
 *    block, not on the answer), beside the server process's own CPU per call at each size and
 *    its ratio, also medians of the blocks (from /proc: all the embedded server's threads; the
 *    PostgreSQL backend serving that size).
 *
 * 4. With `--bulk N`: N documents of about 1 KB (the `account`, `seq` index), each engine in turn
 *    at the same commands, one statement each: every document updated (`updateMany`), half of
 *    them moved in the index (their `seq` changed), those counted, and deleted (`deleteMany`);
 *    the time and the server's CPU of each, against PostgreSQL's, and whether the embedded
 *    server answered them all in the process it started in (its heap is sized for its file at
 *    start, so N beyond it is a command larger than memory).
 *
 * 5. With `--soak N`: N minutes of the service's mix at 25 requests/s (each a session read, a meter
 *    counter `$inc` and a `j: true` evidence append), the store file and the server's resident
 *    memory once a minute, against the documents' BSON bytes.
 *
 * The report starts with the machine's load average before and after the run.
 *
 * The largest size is the one the flatness goal is about: `--sizes 1000,100000,1000000` fills
 * 1,000,000 documents once (minutes) and keeps them in the data folder for later runs.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { chownSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { BSON, MongoClient } from 'mongodb';
import { Client } from 'pg';
import { freePort, startLocalMongo, type LocalMongo } from '../tools/stack';
import { loadLine } from './support/load';
import { storeStatus } from './support/store-status';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000,100000' },
    writes: { type: 'string', default: '20000' },
    reads: { type: 'string', default: '1000' },
    blocks: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '5000' },
    idle: { type: 'string', default: '15' },
    bulk: { type: 'string', default: '0' },
    soak: { type: 'string', default: '0' },
    'data-dir': { type: 'string', default: '.data/bench-database' },
  },
  strict: true,
});
const SIZES = values.sizes.split(',').map(Number);
// The reads compare the smallest store with the largest, each in its own server and folder.
if (
  SIZES.length < 2 ||
  SIZES.some((size, i) => !Number.isInteger(size) || size < 1 || (i > 0 && size <= SIZES[i - 1]!))
) {
  console.error(
    `--sizes must be two or more ascending whole numbers, e.g. 1000,1000000 (got ${values.sizes})`,
  );
  process.exit(2);
}
const WRITES = Number(values.writes);
const READS = Number(values.reads);
const BLOCKS = Number(values.blocks);
if (!Number.isInteger(BLOCKS) || BLOCKS < 1 || READS < BLOCKS) {
  console.error(`--blocks must be a whole number from 1 to --reads (got ${values.blocks})`);
  process.exit(2);
}
const PER_BLOCK = Math.ceil(READS / BLOCKS);
const WARMUP = Number(values.warmup);
const IDLE_S = Number(values.idle);
const BULK = Number(values.bulk);
const SOAK_MINUTES = Number(values.soak);
const PG_BIN = '/usr/lib/postgresql/15/bin';

interface Doc {
  _id: string;
  account: string;
  seq: number;
  kind: string;
  at: Date;
  hash: string;
  data: { path: string; status: number; n: number };
}

/** The i-th document of a collection: about 275 BSON bytes, like a sealed evidence record. */
const doc = (i: number, id: string): Doc => ({
  _id: id,
  account: `acct_${String(i % 1000).padStart(4, '0')}`,
  seq: Math.floor(i / 1000),
  kind: 'api.request',
  at: new Date(1_790_000_000_000 + i),
  hash: createHash(i),
  data: { path: '/shield/inspect/' + 'x'.repeat(52), status: 200, n: 0 },
});
const createHash = (i: number) => (i.toString(16).padStart(8, '0') + 'ab'.repeat(28)).slice(0, 64);
/** Ids of a size's collection: `d` + the number, so a uniform pick needs no list. */
const idOf = (i: number) => `d${String(i).padStart(8, '0')}`;

const DURABLE = { writeConcern: { w: 1, journal: true } } as const;

// ---- the servers ----

interface Mongo {
  server: LocalMongo;
  client: MongoClient;
  folder: string;
}

async function startMongo(folder: string): Promise<Mongo & { openMs: number }> {
  const started = performance.now();
  const server = await startLocalMongo({
    dataDir: folder,
    port: await freePort(),
    log: (line) => process.env.BENCH_SERVER_LOGS && console.log(line),
  });
  const client = await MongoClient.connect(server.address);
  const docs = client.db('bench').collection<Doc>('docs');
  await docs.findOne({ _id: idOf(0) });
  return { server, client, folder, openMs: performance.now() - started };
}

async function stopMongo(mongo: Mongo): Promise<void> {
  await mongo.client.close();
  await mongo.server.stop();
}

/** Bytes the process has caused to be written to storage so far (Linux /proc, `write_bytes`). */
function bytesWritten(pid: number): number {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  return Number(/write_bytes: (\d+)/.exec(io)![1]);
}

async function folderBytes(folder: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

/** A PostgreSQL 15 cluster of its own in a temporary folder, on a free loopback port. */
async function startPostgres() {
  const folder = await mkdtemp(join(tmpdir(), 'bench-pg-'));
  const port = await freePort();
  // initdb refuses to run as root: the cluster then belongs to the postgres user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const pw = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    chownSync(folder, Number(pw.stdout), Number(gid.stdout));
  }
  const run = (command: string, args: string[]) => {
    const full = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
    const result = spawnSync(full[0] as string, full[1] as string[], { encoding: 'utf8' });
    if (result.status !== 0)
      throw new Error(`${command} failed: ${result.stderr || result.stdout}`);
  };
  const data = join(folder, 'data');
  run(`${PG_BIN}/initdb`, ['-D', data, '-A', 'trust', '-U', 'bench', '--no-sync']);
  const options = `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on`;
  const pg = {
    port,
    folder,
    start(): number {
      const started = performance.now();
      run(`${PG_BIN}/pg_ctl`, [
        '-D',
        data,
        '-o',
        options,
        '-l',
        join(folder, 'log'),
        '-w',
        'start',
      ]);
      return performance.now() - started;
    },
    stop: () => run(`${PG_BIN}/pg_ctl`, ['-D', data, '-m', 'fast', '-w', 'stop']),
    async connect() {
      const client = new Client({ host: '127.0.0.1', port, user: 'bench', database: 'postgres' });
      await client.connect();
      return client;
    },
    remove: () => rm(folder, { recursive: true, force: true }),
  };
  pg.start();
  return pg;
}

const pgTable = (name: string) =>
  `CREATE TABLE ${name} (id text PRIMARY KEY, account text NOT NULL, seq int NOT NULL, doc jsonb NOT NULL);
   CREATE INDEX ON ${name} (account, seq)`;
const pgRow = (d: Doc) => [d._id, d.account, d.seq, JSON.stringify(d)];

/** Documents as rows of a `pgTable`, in one statement. */
async function pgInsert(pg: Client, table: string, docs: Doc[]): Promise<void> {
  const rows = docs.map(pgRow);
  const placeholders = rows.map(
    (_, r) => `($${r * 4 + 1}, $${r * 4 + 2}, $${r * 4 + 3}, $${r * 4 + 4})`,
  );
  await pg.query(`INSERT INTO ${table} VALUES ${placeholders.join(', ')}`, rows.flat());
}

/** WAL bytes plus data pages written (after a checkpoint), so far. */
async function pgBytesWritten(pg: Client): Promise<number> {
  await pg.query('CHECKPOINT');
  const { rows } = await pg.query<{ wal: string; pages: string }>(
    `SELECT (SELECT wal_bytes FROM pg_stat_wal)::text AS wal,
            (buffers_checkpoint + buffers_clean + buffers_backend)::text AS pages FROM pg_stat_bgwriter`,
  );
  return Number(rows[0]!.wal) + Number(rows[0]!.pages) * 8192;
}

// ---- measuring ----

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!;
/** The middle value of sorted `xs` (the mean of the middle two when their number is even). */
const median = (xs: number[]) => (xs[(xs.length - 1) >> 1]! + xs[xs.length >> 1]!) / 2;
const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
const kb = (bytes: number) => (bytes / 1e3).toFixed(1);

async function timed(n: number, op: (i: number) => Promise<unknown>): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await op(i);
    ms.push(performance.now() - started);
  }
  return ms;
}

/**
 * `timed`, with the CPU each call cost on average in µs: the server process's (`cpuNs`) and this
 * client's (its driver, serialisation and event loop).
 */
async function timedCpu(n: number, op: (i: number) => Promise<unknown>, serverPid: number) {
  const [server, client] = [cpuNs(serverPid), process.cpuUsage()];
  const ms = await timed(n, op);
  const spent = process.cpuUsage(client);
  return {
    ms,
    cpu: {
      server: (cpuNs(serverPid) - server) / 1e3 / n,
      client: (spent.user + spent.system) / n,
    },
  };
}

/** PostgreSQL's backend process serving this connection. */
const backendPid = async (client: Client) =>
  (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;

function shuffled(n: number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

const UPDATE_SQL = `UPDATE writes SET doc = jsonb_set(doc, '{data,n}', to_jsonb((doc->'data'->>'n')::int + 1)) WHERE id = $1`;

/**
 * `WARMUP` synced inserts and updates and plain updates on each engine, in a collection and a table
 * dropped afterwards: a fresh JVM compiles its hot paths over the first thousands of calls, which
 * measured cold took more CPU than the writes themselves. Then waits for the store to settle.
 */
async function warmWrites(mongo: Mongo, pg: Client): Promise<void> {
  const scratch = mongo.client.db('bench').collection<Doc>('warmup');
  await pg.query(`DROP TABLE IF EXISTS warmup; ${pgTable('warmup')}`);
  for (let i = 0; i < WARMUP; i++) {
    const d = doc(i, `w${i}`);
    await scratch.insertOne(d, DURABLE);
    await scratch.updateOne({ _id: d._id }, { $inc: { 'data.n': 1 } }, DURABLE);
    await scratch.updateOne({ _id: d._id }, { $inc: { 'data.n': 1 } });
    await pg.query({
      name: 'warm',
      text: 'INSERT INTO warmup VALUES ($1, $2, $3, $4)',
      values: pgRow(d),
    });
  }
  await scratch.drop();
  await pg.query('DROP TABLE warmup');
  await settled(mongo);
}

async function writes(mongo: Mongo, pg: Client): Promise<string[]> {
  await warmWrites(mongo, pg);
  const ids = Array.from({ length: WRITES }, () => randomBytes(12).toString('hex'));
  const docs = ids.map((id, i) => doc(i, id));
  const logical = docs.reduce((sum, d) => sum + BSON.calculateObjectSize(d), 0);
  const order = shuffled(WRITES);
  const collection = mongo.client.db('bench').collection<Doc>('writes');
  await collection.drop().catch(() => {});
  await pg.query(`DROP TABLE IF EXISTS writes; ${pgTable('writes')}`);
  const pid = mongo.server.process.child.pid!;
  const pgBackend = await backendPid(pg);
  const sizes = async () => ({
    mongo: await folderBytes(mongo.folder),
    pg: Number(
      (await pg.query<{ n: string }>(`SELECT pg_total_relation_size('writes')::text AS n`)).rows[0]!
        .n,
    ),
  });
  /**
   * One phase on each engine in turn, with the bytes each wrote during its own part (the embedded
   * server's idle compaction while PostgreSQL runs is not counted as the phase's).
   */
  const phase = async (mongoOp: (i: number) => Promise<unknown>, pgOp: typeof mongoOp) => {
    const mongoBefore = bytesWritten(pid);
    const mongo = await timedCpu(WRITES, mongoOp, pid);
    const mongoBytes = bytesWritten(pid) - mongoBefore;
    const pgBefore = await pgBytesWritten(pg);
    const postgres = await timedCpu(WRITES, pgOp, pgBackend);
    const pgBytes = (await pgBytesWritten(pg)) - pgBefore;
    return {
      ms: { mongo: mongo.ms, pg: postgres.ms },
      cpu: { mongo: mongo.cpu, pg: postgres.cpu },
      bytes: { mongo: mongoBytes, pg: pgBytes },
    };
  };

  const inserts = await phase(
    (i) => collection.insertOne(docs[i]!, DURABLE),
    (i) =>
      pg.query({
        name: 'insert',
        text: 'INSERT INTO writes VALUES ($1, $2, $3, $4)',
        values: pgRow(docs[i]!),
      }),
  );
  const inserted = await sizes();
  const updates = await phase(
    (i) => collection.updateOne({ _id: ids[order[i]!]! }, { $inc: { 'data.n': 1 } }, DURABLE),
    (i) => pg.query({ name: 'update', text: UPDATE_SQL, values: [ids[order[i]!]] }),
  );
  const updated = await sizes();
  await new Promise((r) => setTimeout(r, IDLE_S * 1000));
  const idle = await sizes();
  // Plain writes: acknowledged once applied and kept if the server process is killed, not synced.
  // PostgreSQL's nearest is an asynchronous commit (its WAL flushed in the background).
  await pg.query('SET synchronous_commit TO off');
  const plain = await phase(
    (i) => collection.updateOne({ _id: ids[order[i]!]! }, { $inc: { 'data.n': 1 } }),
    (i) => pg.query({ name: 'update', text: UPDATE_SQL, values: [ids[order[i]!]] }),
  );
  await pg.query('RESET synchronous_commit');
  console.log(`writes: done (${mb(logical)} MB of documents)`);
  const row = (engine: 'mongo' | 'pg', name: string) =>
    `| ${name} | ${pct(inserts.ms[engine], 0.5).toFixed(2)} | ${pct(updates.ms[engine], 0.5).toFixed(2)} | ` +
    `${pct(plain.ms[engine], 0.5).toFixed(2)} | ` +
    `${[inserts, updates, plain].map((p) => `${p.cpu[engine].server.toFixed(0)} / ${p.cpu[engine].client.toFixed(0)}`).join(' | ')} | ` +
    `${kb(inserts.bytes[engine] / WRITES)} | ${kb(updates.bytes[engine] / WRITES)} | ` +
    `${mb(inserted[engine])} | ${mb(updated[engine])} | ${mb(idle[engine])} | ` +
    `**${(idle[engine] / logical).toFixed(1)}×** |`;
  return [
    `| ${WRITES} single inserts, then one \`$inc\` of each (${mb(logical)} MB of documents), synced; then another \`$inc\` of each, not synced | insert p50 ms | update p50 ms | unsynced update p50 ms | insert CPU µs, server / client | update CPU µs, server / client | unsynced update CPU µs, server / client | KB written per insert | KB written per update | MB after inserts | MB after updates | MB after ${IDLE_S} s idle | idle / data |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    row('mongo', `${mongoName} (\`j: true\`; then no \`j\`)`),
    row('pg', 'PostgreSQL 15 (table + indexes; then `synchronous_commit=off`)'),
  ];
}

let mongoName = 'embedded server';

const residentBytes = (pid: number) =>
  1024 * Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

async function soak(folder: string): Promise<string[]> {
  await rm(folder, { recursive: true, force: true });
  const mongo = await startMongo(folder);
  const db = mongo.client.db('bench');
  const sessions = db.collection<Doc>('sessions');
  const counters = db.collection<{ _id: string; n: number }>('counters');
  const evidence = db.collection<Doc>('evidence');
  await sessions.insertMany(Array.from({ length: 1000 }, (_, i) => doc(i, idOf(i))));
  const fixedBytes = 1000 * BSON.calculateObjectSize(doc(0, idOf(0))) + 1000 * 40;
  const pid = mongo.server.process.child.pid!;
  const rows = [
    `| Soak: 25 requests/s of the service's mix | ${Array.from({ length: SOAK_MINUTES + 1 }, (_, m) => `${m} min`).join(' | ')} |`,
    `|---|${Array.from({ length: SOAK_MINUTES + 1 }, () => '---:').join('|')}|`,
  ];
  const samples = { file: [] as string[], data: [] as string[], rss: [] as string[] };
  const takeSample = async (appended: number) => {
    samples.file.push(mb(await folderBytes(folder)));
    samples.data.push(mb(fixedBytes + appended * BSON.calculateObjectSize(doc(0, idOf(0)))));
    samples.rss.push(mb(residentBytes(pid)));
  };
  const started = Date.now();
  let n = 0;
  await takeSample(0);
  while (Date.now() - started < SOAK_MINUTES * 60_000) {
    const tick = Date.now();
    await Promise.all([
      sessions.findOne({ _id: idOf(randomInt(1000)) }),
      counters.updateOne({ _id: `c${n % 1000}` }, { $inc: { n: 1 } }, { upsert: true }),
      evidence.insertOne(doc(n, `e${String(n).padStart(12, '0')}`), DURABLE),
    ]);
    n++;
    if (Date.now() - started >= samples.file.length * 60_000) await takeSample(n);
    await new Promise((r) => setTimeout(r, Math.max(0, 40 - (Date.now() - tick))));
  }
  if (samples.file.length <= SOAK_MINUTES) await takeSample(n);
  await stopMongo(mongo);
  rows.push(
    `| store file, MB | ${samples.file.join(' | ')} |`,
    `| documents (BSON), MB | ${samples.data.join(' | ')} |`,
    `| server resident memory, MB | ${samples.rss.join(' | ')} |`,
  );
  return rows;
}

/** About 1 KB of BSON: the document of the reads, with a padding field. */
const bulkDoc = (i: number) => ({ ...doc(i, idOf(i)), pad: 'p'.repeat(700) });

/**
 * Commands over every document, or half of them, on a collection of `BULK` ~1 KB documents, each
 * one statement on each engine in turn: its time and the server's CPU (the embedded server's
 * whole process; PostgreSQL's backend).
 */
async function bulk(folder: string, pg: Client): Promise<string[]> {
  await rm(folder, { recursive: true, force: true });
  const mongo = await startMongo(folder);
  const pid = mongo.server.process.child.pid!;
  const docs = mongo.client.db('bench').collection<Doc & { pad: string }>('bulk');
  await docs.createIndex({ account: 1, seq: 1 });
  await pg.query(`DROP TABLE IF EXISTS bulk; ${pgTable('bulk')}`);
  const backend = await backendPid(pg);
  const fillStarted = performance.now();
  for (let i = 0; i < BULK; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, BULK - i) }, (_, j) => bulkDoc(i + j));
    await docs.insertMany(batch, { ordered: false });
    await pgInsert(pg, 'bulk', batch);
    if (i % 50_000 === 0 && i) console.log(`bulk: ${i} of ${BULK} documents in both engines`);
  }
  await pg.query('VACUUM ANALYZE bulk');
  const logical = BULK * BSON.calculateObjectSize(bulkDoc(0));
  console.log(
    `bulk: ${BULK} documents (${mb(logical)} MB) in ${((performance.now() - fillStarted) / 1000).toFixed(0)} s; the store settling`,
  );
  await settled(mongo);
  // Half of the accounts: half of the documents.
  const half = { account: { $lt: 'acct_0500' } };
  const halfSql = `account < 'acct_0500'`;
  const commands: [string, () => Promise<unknown>, string][] = [
    [
      'every document updated',
      () => docs.updateMany({}, { $inc: { 'data.n': 1 } }),
      `UPDATE bulk SET doc = jsonb_set(doc, '{data,n}', to_jsonb((doc->'data'->>'n')::int + 1))`,
    ],
    [
      'half moved in the index',
      () => docs.updateMany(half, { $inc: { seq: 1_000_000 } }),
      `UPDATE bulk SET seq = seq + 1000000 WHERE ${halfSql}`,
    ],
    ['half counted', () => docs.countDocuments(half), `SELECT count(*) FROM bulk WHERE ${halfSql}`],
    ['half deleted', () => docs.deleteMany(half), `DELETE FROM bulk WHERE ${halfSql}`],
  ];
  const rows = [
    `| ${BULK.toLocaleString('en')} documents of ${kb(logical / BULK)} KB (${mb(logical)} MB) | ${mongoName}, s | server CPU, s | PostgreSQL 15, s | backend CPU, s | time / PostgreSQL |`,
    '|---|---:|---:|---:|---:|---:|',
  ];
  const measure = async (serverPid: number, command: () => Promise<unknown>) => {
    const cpu = cpuNs(serverPid);
    const started = performance.now();
    await command();
    return { s: (performance.now() - started) / 1000, cpuS: (cpuNs(serverPid) - cpu) / 1e9 };
  };
  for (const [name, mongoCommand, sql] of commands) {
    const ours = await measure(pid, mongoCommand);
    const theirs = await measure(backend, () => pg.query(sql));
    console.log(`bulk: ${name}`);
    rows.push(
      `| ${name} | ${ours.s.toFixed(1)} | ${ours.cpuS.toFixed(1)} | ${theirs.s.toFixed(1)} | ${theirs.cpuS.toFixed(1)} | ${(ours.s / theirs.s).toFixed(1)}× |`,
    );
  }
  const sameProcess = mongo.server.process.child.exitCode === null;
  const remaining = sameProcess ? await docs.countDocuments() : null;
  const resident = sameProcess ? residentBytes(pid) : 0;
  await stopMongo(mongo);
  // The reference ran the same statements on the same rows: what it kept is what should be left.
  const { rows: left } = await pg.query<{ n: string }>('SELECT count(*)::text AS n FROM bulk');
  const kept = Number(left[0]!.n);
  await pg.query('DROP TABLE bulk');
  if (remaining !== kept) {
    throw new Error(
      sameProcess
        ? `bulk: ${remaining} documents left of ${BULK}, ${kept} expected`
        : `bulk: the ${mongoName} exited during the commands`,
    );
  }
  rows.push(
    '',
    `The ${mongoName} answered every command in the process it started in, the ${kept.toLocaleString('en')} documents expected left (${mb(resident)} MB resident at the end).`,
  );
  return rows;
}

async function fillMongo(folder: string, size: number): Promise<void> {
  const mongo = await startMongo(folder).catch(() => null);
  if (!mongo) throw new Error(`could not open ${folder}`);
  const marker = mongo.client.db('bench').collection<{ _id: string; size: number }>('marker');
  if ((await marker.findOne({ _id: 'filled' }))?.size !== size) {
    const docs = mongo.client.db('bench').collection<Doc>('docs');
    await docs.drop().catch(() => {});
    await docs.createIndex({ account: 1, seq: 1 });
    const started = Date.now();
    for (let i = 0; i < size; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, size - i) }, (_, j) =>
        doc(i + j, idOf(i + j)),
      );
      await docs.insertMany(batch, { ordered: false });
      if (Date.now() - started > 10_000 && i % 100_000 === 0)
        console.log(`  filling ${size}: ${i}`);
    }
    await marker.updateOne({ _id: 'filled' }, { $set: { size } }, { upsert: true, ...DURABLE });
  }
  await stopMongo(mongo);
}

async function fillPostgres(pg: Client, size: number): Promise<void> {
  await pg.query(`DROP TABLE IF EXISTS docs_${size}; ${pgTable(`docs_${size}`)}`);
  for (let i = 0; i < size; i += 5000) {
    const batch = Array.from({ length: Math.min(5000, size - i) }, (_, j) =>
      doc(i + j, idOf(i + j)),
    );
    await pgInsert(pg, `docs_${size}`, batch);
  }
  await pg.query(`VACUUM ANALYZE docs_${size}`);
}

type Read = (i: number) => Promise<unknown>;

function mongoReads(mongo: Mongo): Record<string, Read> {
  const docs = mongo.client.db('bench').collection<Doc>('docs');
  const admin = mongo.client.db('admin');
  return readsOf(
    (i) => docs.findOne({ _id: idOf(i) }),
    (i) =>
      docs.findOne({
        account: `acct_${String(i % 1000).padStart(4, '0')}`,
        seq: Math.floor(i / 1000),
      }),
    () => admin.command({ ping: 1 }),
  );
}

function pgReads(pg: Client, size: number): Record<string, Read> {
  return readsOf(
    (i) =>
      pg.query({
        name: `id_${size}`,
        text: `SELECT doc FROM docs_${size} WHERE id = $1`,
        values: [idOf(i)],
      }),
    (i) =>
      pg.query({
        name: `ix_${size}`,
        text: `SELECT doc FROM docs_${size} WHERE account = $1 AND seq = $2`,
        values: [`acct_${String(i % 1000).padStart(4, '0')}`, Math.floor(i / 1000)],
      }),
    () => pg.query('SELECT 1'),
  );
}

/**
 * The reads, and a round trip that reads nothing (`ping`; `SELECT 1`): the floor under each engine
 * with its own client library, which the reads' gap is measured against.
 */
function readsOf(byId: Read, byIndex: Read, nothing: Read): Record<string, Read> {
  return {
    'by _id, uniform': byId,
    'by (account, seq), uniform': byIndex,
    'by _id, hot (one document)': byId,
    'nothing (`ping`; `SELECT 1`)': nothing,
  };
}

type TargetName = 'mongoSmall' | 'mongoLarge' | 'pgSmall' | 'pgLarge';
/** One engine at one size: the reads, and the server process that answers them. */
interface Target {
  pid: number;
  reads: Record<string, Read>;
}
/** Per read and target: ms of each call, and the CPU the server process used for all of them. */
type Sample = Record<string, Record<TargetName, { ms: number[]; cpuNs: number }>>;

/**
 * CPU time a process has used so far, all its threads, in ns (Linux /proc `schedstat`, which
 * counts to the nanosecond where `stat` counts 10 ms ticks, too coarse for a block of reads).
 */
function cpuNs(pid: number): number {
  let total = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return total;
}

/** `WARMUP` unmeasured calls of each read on each target, then `BLOCKS` measured blocks. */
async function compareReads(targets: Record<TargetName, Target>, sizes: [number, number]) {
  await sample(targets, sizes, WARMUP);
  const blocks: Sample[] = [];
  for (let b = 0; b < BLOCKS; b++) blocks.push(await sample(targets, sizes, PER_BLOCK));
  return blocks;
}

/** Each read in turn, `calls` rounds of it, each round calling the four targets in a new order. */
async function sample(
  targets: Record<TargetName, Target>,
  sizes: [number, number],
  calls: number,
): Promise<Sample> {
  const result: Sample = {};
  const targetNames = Object.keys(targets) as TargetName[];
  for (const name of Object.keys(targets.mongoSmall.reads)) {
    const hot = name.includes('hot');
    const ms = Object.fromEntries(targetNames.map((t) => [t, [] as number[]])) as Record<
      TargetName,
      number[]
    >;
    // Each server answers only its own target's calls, so its CPU over the rounds is theirs.
    const cpuBefore = targetNames.map((t) => cpuNs(targets[t].pid));
    for (let i = 0; i < calls; i++) {
      // A new order each round: the first call after another engine's pays for waking it, which
      // a fixed order charged to the same target every time.
      for (const which of shuffled(targetNames.length).map((t) => targetNames[t]!)) {
        const size = which.endsWith('Small') ? sizes[0] : sizes[1];
        const pick = hot ? Math.floor(size / 2) : randomInt(size);
        const started = performance.now();
        await targets[which].reads[name]!(pick);
        ms[which].push(performance.now() - started);
      }
    }
    result[name] = Object.fromEntries(
      targetNames.map((t, k) => [t, { ms: ms[t], cpuNs: cpuNs(targets[t].pid) - cpuBefore[k]! }]),
    ) as Sample[string];
  }
  return result;
}

/**
 * Waits until the embedded server's store has stopped compacting (its sync count stays put), so
 * reads are measured on a settled store rather than beside the rewrite of what filling it left
 * behind; at most `limitS` seconds. A server without the `tripwireStore` counters is taken as is.
 */
async function settled(mongo: Mongo, limitS = 300): Promise<void> {
  const syncs = async () => (await storeStatus(mongo.client.db()))?.syncs;
  let last = await syncs();
  if (last === undefined) return;
  for (let still = 0, waited = 0; still < 5 && waited < limitS; waited++) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = await syncs();
    still = now === last ? still + 1 : 0;
    last = now;
  }
}

async function main(): Promise<void> {
  const loadBefore = loadavg();
  const dataDir = resolve(values['data-dir']);
  await mkdir(dataDir, { recursive: true });
  const pg = await startPostgres();
  const lines: string[] = [];
  try {
    let pgClient = await pg.connect();
    const writeFolder = join(dataDir, 'writes');
    await rm(writeFolder, { recursive: true, force: true });
    const writer = await startMongo(writeFolder);
    mongoName = writer.server.description.split(',')[0]!;
    console.log(
      `database: ${writer.server.description}; reference: PostgreSQL 15 on port ${pg.port}`,
    );
    lines.push(...(await writes(writer, pgClient)), '');
    await stopMongo(writer);

    const folderOf = (size: number) => join(dataDir, `size-${size}`);
    for (const size of SIZES) {
      await fillMongo(folderOf(size), size);
      await fillPostgres(pgClient, size);
      console.log(`filled ${size}`);
    }
    const open: Record<number, { mongo: number; pg: number; rss: number }> = {};
    for (const size of SIZES) {
      const mongo = await startMongo(folderOf(size));
      const rss = residentBytes(mongo.server.process.child.pid!);
      await stopMongo(mongo);
      await pgClient.end();
      pg.stop();
      const pgMs = pg.start();
      const started = performance.now();
      pgClient = await pg.connect();
      await pgReads(pgClient, size)['by _id, uniform']!(0);
      open[size] = { mongo: mongo.openMs, pg: pgMs + performance.now() - started, rss };
    }
    lines.push(
      `| Start to first answered read | ${SIZES.map((s) => s.toLocaleString('en')).join(' | ')} |`,
      `|---|${SIZES.map(() => '---:').join('|')}|`,
      `| ${mongoName}, ms | ${SIZES.map((s) => open[s]!.mongo.toFixed(0)).join(' | ')} |`,
      `| ${mongoName}, MB resident after the first read | ${SIZES.map((s) => mb(open[s]!.rss)).join(' | ')} |`,
      `| ${mongoName}, MB of files | ${(await Promise.all(SIZES.map(async (s) => mb(await folderBytes(folderOf(s)))))).join(' | ')} |`,
      `| PostgreSQL 15 (cluster start + connect + read), ms | ${SIZES.map((s) => open[s]!.pg.toFixed(0)).join(' | ')} |`,
      '',
    );

    const [smallest, largest] = [SIZES[0]!, SIZES[SIZES.length - 1]!];
    const small = await startMongo(folderOf(smallest));
    const large = await startMongo(folderOf(largest)).catch(async (err: unknown) => {
      await stopMongo(small);
      throw err;
    });
    // A connection, and so a backend process, per size: each backend's CPU is its size's reads'.
    const pgSmall = await pg.connect();
    const pgLarge = await pg.connect();
    try {
      await settled(small);
      await settled(large);
      const blocks = await compareReads(
        {
          mongoSmall: { pid: small.server.process.child.pid!, reads: mongoReads(small) },
          mongoLarge: { pid: large.server.process.child.pid!, reads: mongoReads(large) },
          pgSmall: { pid: await backendPid(pgSmall), reads: pgReads(pgSmall, smallest) },
          pgLarge: { pid: await backendPid(pgLarge), reads: pgReads(pgLarge, largest) },
        },
        [smallest, largest],
      );
      const n = (x: number) => x.toLocaleString('en');
      lines.push(
        `| Read (${BLOCKS} blocks of ${PER_BLOCK} calls each, taking turns, after ${WARMUP} unmeasured) | engine | p50 ms at ${n(smallest)} | p50 ms at ${n(largest)} | large / small, median block | blocks' range | server CPU µs per call at ${n(smallest)}, median block | at ${n(largest)} | CPU large / small, median block | p99 ms at ${n(smallest)} | p99 ms at ${n(largest)} | p50 / PostgreSQL at ${n(largest)} |`,
        '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      );
      for (const name of Object.keys(blocks[0]!)) {
        const all = (target: TargetName) => blocks.flatMap((block) => block[name]![target].ms);
        /** A figure of each block (`of` its calls of this read), sorted. */
        const perBlock = (of: (read: Sample[string]) => number) =>
          blocks.map((block) => of(block[name]!)).sort((a, b) => a - b);
        const p50 = (read: Sample[string], target: TargetName) => pct(read[target].ms, 0.5);
        const cpuUs = (read: Sample[string], target: TargetName) =>
          read[target].cpuNs / 1e3 / PER_BLOCK;
        for (const [engine, smallTarget, largeTarget] of [
          [mongoName, 'mongoSmall', 'mongoLarge'],
          ['PostgreSQL 15', 'pgSmall', 'pgLarge'],
        ] as const) {
          const ratios = perBlock((read) => p50(read, largeTarget) / p50(read, smallTarget));
          const cpuRatios = perBlock((read) => cpuUs(read, largeTarget) / cpuUs(read, smallTarget));
          const [small50, large50] = [pct(all(smallTarget), 0.5), pct(all(largeTarget), 0.5)];
          lines.push(
            `| ${name} | ${engine} | ${small50.toFixed(3)} | ${large50.toFixed(3)} | ` +
              `**${median(ratios).toFixed(2)}** | ${ratios[0]!.toFixed(2)}–${ratios[ratios.length - 1]!.toFixed(2)} | ` +
              `${median(perBlock((read) => cpuUs(read, smallTarget))).toFixed(0)} | ${median(perBlock((read) => cpuUs(read, largeTarget))).toFixed(0)} | ` +
              `${median(cpuRatios).toFixed(2)} | ` +
              `${pct(all(smallTarget), 0.99).toFixed(3)} | ${pct(all(largeTarget), 0.99).toFixed(3)} | ` +
              `${(large50 / pct(all('pgLarge'), 0.5)).toFixed(2)} |`,
          );
        }
      }
      lines.push(
        '',
        `Server resident memory after the reads: ${mb(residentBytes(small.server.process.child.pid!))} MB at ${n(smallest)}, ` +
          `${mb(residentBytes(large.server.process.child.pid!))} MB at ${n(largest)}.`,
      );
    } finally {
      await pgSmall.end();
      await pgLarge.end();
      await stopMongo(small);
      await stopMongo(large);
    }
    if (BULK > 0) lines.push('', ...(await bulk(join(dataDir, 'bulk'), pgClient)));
    await pgClient.end();
    if (SOAK_MINUTES > 0) lines.push('', ...(await soak(join(dataDir, 'soak'))));
  } finally {
    try {
      pg.stop();
    } finally {
      await pg.remove();
    }
  }
  console.log(`\n> ${loadLine(loadBefore)}\n\n${lines.join('\n')}`);
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
