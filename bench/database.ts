/**
 * The service's hot database operations, through its own repositories, on a nearly empty database
 * and on a large one, call by call alternately on the same server: the ratio of the medians, large /
 * small, says whether each is served from an index (about 1) or scans (grows with the data).
 *
 *   npm run bench:database -- [--evidence 1000000] [--others 100000] [--small 1000] [--ops 300]
 *                             [--rounds 3] [--data-dir .data/bench-database]
 *
 * The large database is filled once (minutes at 1,000,000 records, with progress) and kept in the
 * data folder, so later runs start measuring at once. MONGODB_URI measures another server instead.
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Db, Document } from 'mongodb';
import { SessionsRepository } from '../src/accounts/sessions.repository';
import { CanariesRepository } from '../src/canaries/canaries.repository';
import { ThreatsRepository } from '../src/canaries/threats.repository';
import { ALL_INDEXES } from '../src/db/indexes';
import { connectMongo, ensureIndexes } from '../src/db/mongo';
import { EvidenceLog } from '../src/evidence/log/evidence-log';
import { EvidenceRepository } from '../src/evidence/evidence.repository';
import { EvidenceService } from '../src/evidence/evidence.service';
import { EvidenceStore } from '../src/evidence/evidence.store';
import { generateSigner } from '../src/evidence/log/signed-note';
import { ApiKeysRepository, type ApiKey } from '../src/keys/api-keys.repository';
import { MongoCounterStore } from '../src/metering/counters.repository';
import { freePort, provideMongo } from '../tools/stack';

const { values } = parseArgs({
  options: {
    evidence: { type: 'string', default: '1000000' },
    others: { type: 'string', default: '100000' },
    small: { type: 'string', default: '1000' },
    ops: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '3' },
    'data-dir': { type: 'string', default: '.data/bench-database' },
  },
  strict: true,
});
const OPS = Number(values.ops);
const ROUNDS = Number(values.rounds);

const hex = () => randomBytes(16).toString('hex');
const at = new Date('2026-11-01T00:00:00Z');

const apiKey = (id: string, accountId: string): ApiKey => ({
  id,
  accountId,
  name: '',
  prefix: 'sk_live_',
  secretHash: hex(),
  scopes: ['*'],
  slot: 0,
  createdAt: at,
  lastUsedAt: null,
  revokedAt: null,
});

/** Documents shaped like the repositories' own, for the collections the measured reads touch. */
const fillers: Record<string, (i: number) => Document> = {
  evidence: (i) => ({
    _id: `evd_fill_${i}`,
    accountId: `acct_fill_${i % 1000}`,
    seq: Math.floor(i / 1000) + 1,
    kind: 'api.request',
    sealedAt: at,
    prevHash: hex(),
    prevLogId: `evd_fill_${i - 1000}`,
    data: { path: '/shield/inspect', status: 200, n: i },
    contentHash: hex() + hex(),
    algorithm: 'sha256-jcs',
  }),
  canary_tokens: (i) => ({ _id: hex() + hex(), canaryId: `cnr_fill_${i}` }),
  api_keys: (i) => {
    const { id, ...rest } = apiKey(`key_fill_${i}`, `acct_fill_${i % 1000}`);
    return { _id: id, ...rest };
  },
  sessions: (i) => ({
    _id: `ses_fill_${i}`,
    userId: `usr_fill_${i % 1000}`,
    tokenHash: hex() + hex(),
    tokenExpiresAt: at,
    refreshHash: hex() + hex(),
    refreshExpiresAt: at,
    createdAt: at,
  }),
  meter_counters: (i) => ({
    _id: `acct_fill_${i}:shield_inspections:month:2026-11`,
    count: 3,
    days: { '2026-11-03': 3 },
    minute: { key: '2026-11-03T10:00', count: 3 },
  }),
  threat_events: (i) => ({
    _id: `thr_fill_${i}`,
    accountId: `acct_fill_${i % 1000}`,
    firstHitAt: at,
  }),
};

async function fill(db: Db, evidence: number, others: number): Promise<void> {
  const marker = db.collection<{ _id: string; evidence: number; others: number }>('bench_marker');
  const done = await marker.findOne({ _id: 'filled' });
  if (done?.evidence === evidence && done.others === others) {
    // A database kept from an earlier run gets the indexes added since.
    return ensureIndexes(db, ALL_INDEXES);
  }
  await db.dropDatabase();
  await ensureIndexes(db, ALL_INDEXES);
  for (const [collection, make] of Object.entries(fillers)) {
    const total = collection.startsWith('evidence') ? evidence : others;
    const started = Date.now();
    for (let i = 0; i < total; i += 5000) {
      const batch = Array.from({ length: Math.min(5000, total - i) }, (_, j) => make(i + j));
      await db.collection(collection).insertMany(batch, { ordered: false });
      if (Date.now() - started > 10_000 && i % 100_000 === 0) {
        console.log(`  filling ${db.databaseName}.${collection}: ${i} / ${total}`);
      }
    }
  }
  await marker.insertOne({ _id: 'filled', evidence, others });
}

/** One database's operations, each on records the benchmark itself made through the service's code. */
async function operations(db: Db) {
  const tag = hex().slice(0, 8);
  const account = `acct_bench_${tag}`;
  const canaries = new CanariesRepository(db);
  const keys = new ApiKeysRepository(db);
  const sessions = new SessionsRepository(db);
  const counters = new MongoCounterStore(db);
  const evidence = new EvidenceRepository(db);
  // The real append path: each sealed record also becomes a leaf of the signed Merkle log.
  const log = new EvidenceLog(
    db,
    generateSigner('bench.localhost/evidence').signer,
    () => new Date(),
  );
  const verifier = new EvidenceService(evidence, log);
  const store = new EvidenceStore(db, () => new Date(), log.leaves);
  const threats = new ThreatsRepository(db);

  const token = `tok_${tag}`;
  await canaries.plant(
    { accountId: account, kind: 'url', memo: 'bench', platform: null },
    { value: token, tokens: [token] },
    new Date(),
  );
  const keyId = `key_bench_${tag}`;
  await keys.insert(apiKey(keyId, account));
  const tokenHash = hex() + hex();
  const later = new Date(Date.now() + 3_600_000);
  await sessions.create({
    id: `ses_bench_${tag}`,
    userId: `usr_bench_${tag}`,
    tokenHash,
    tokenExpiresAt: later,
    refreshHash: hex() + hex(),
    refreshExpiresAt: later,
    createdAt: new Date(),
  });
  const sealed = await store.appendMany(
    account,
    Array.from({ length: 50 }, (_, i) => ({ kind: 'bench', data: { i } })),
  );
  const threatId = `thr_bench_${tag}`;
  await db
    .collection('threat_events')
    .insertOne({ _id: threatId, accountId: account, firstHitAt: at } as never);

  let n = 0;
  return {
    'canary token lookup': () => canaries.canaryIdForToken([token]),
    'API key lookup': () => keys.findForAuthentication(keyId),
    'session lookup': () => sessions.findByTokenHash(tokenHash, new Date()),
    'meter counter increment': () =>
      counters.take(
        {
          counter: `${account}:bench:${n++ % 50}`,
          month: '2026-11',
          day: '2026-11-24',
          minute: '2026-11-24T10:00',
        },
        { burstPerMinute: 1e9, perDay: 1e9, perMonth: 1e9 },
      ),
    'evidence append': () => store.append(account, { kind: 'bench', data: { n: n++ } }),
    'evidence verify': () => verifier.verify(account, sealed[n++ % sealed.length]!.id),
    'evidence hash lookup': () => evidence.findByHash(sealed[n++ % sealed.length]!.contentHash!),
    'threat event read': () => threats.findEvent(threatId),
    'evidence page (newest 20)': () => evidence.pageNewestFirst(account, { limit: 20 }),
  } satisfies Record<string, () => Promise<unknown>>;
}

/** Latencies of one call each, alternating between the two databases, so noise hits both alike. */
async function alternate(small: () => Promise<unknown>, large: () => Promise<unknown>) {
  const ms = { small: [] as number[], large: [] as number[] };
  for (let i = 0; i < OPS; i++) {
    for (const [size, op] of [
      ['small', small],
      ['large', large],
    ] as const) {
      const started = performance.now();
      await op();
      ms[size].push(performance.now() - started);
    }
  }
  return ms;
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]!;

async function main(): Promise<void> {
  const dataDir = resolve(values['data-dir']);
  await mkdir(dataDir, { recursive: true });
  const log = (line: string) => process.env.BENCH_SERVER_LOGS && console.log(line);
  console.log(
    `opening the database in ${dataDir} (one filled by an earlier run takes minutes: its indexes are rebuilt)…`,
  );
  // The large database (about 3 GB) took 267 s to open on a busy machine: past the usual 180 s.
  const mongo = await provideMongo({
    dataDir,
    port: await freePort(),
    log,
    readyWithinMs: 900_000,
  });
  try {
    const { client } = await connectMongo(mongo.address, 'admin');
    const small = client.db('bench_small');
    const large = client.db('bench_large');
    console.log(`database: ${mongo.description}`);
    console.log(
      `filling: ${values.small} per collection, and ${values.evidence} evidence records + ${values.others} per other collection`,
    );
    await fill(small, Number(values.small), Number(values.small));
    await fill(large, Number(values.evidence), Number(values.others));
    const ops = { small: await operations(small), large: await operations(large) };
    const names = Object.keys(ops.small) as (keyof typeof ops.small)[];
    const rows: string[] = [];
    for (const name of names) {
      const ms = { small: [] as number[], large: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        const sample = await alternate(ops.small[name], ops.large[name]);
        ms.small.push(...sample.small);
        ms.large.push(...sample.large);
      }
      const [s50, l50, s99, l99] = [
        pct(ms.small, 0.5),
        pct(ms.large, 0.5),
        pct(ms.small, 0.99),
        pct(ms.large, 0.99),
      ];
      rows.push(
        `| ${name} | ${s50.toFixed(2)} | ${l50.toFixed(2)} | **${(l50 / s50).toFixed(2)}** | ${s99.toFixed(2)} | ${l99.toFixed(2)} |`,
      );
      console.log(`${name}: done`);
    }
    console.log(
      `\n| Operation (${ROUNDS * OPS} calls each, alternating) | p50 ms at ${values.small} | p50 ms large | large / small | p99 ms at ${values.small} | p99 ms large |`,
    );
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const row of rows) console.log(row);
    await client.close();
  } finally {
    await mongo.stop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
