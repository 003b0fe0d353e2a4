/**
 * The evidence log's costs, each against plain MongoDB work in the same run, `--ops` operations a
 * round, the two taking turns until resolved (bench/support/rounds.ts):
 * - sealed appends (canonical JSON, SHA-256, chain) against raw inserts of the same documents,
 *   one at a time and in batches of 100;
 * - record verifications (`EvidenceService.verify`: two reads and a hash) against raw reads;
 * - the API process's peak memory while it streams a `--records`-record JSON export: a one-off
 *   (the records are seeded once), so one run, with its CPU per record and the load average.
 *
 * The appends and reads run in this process (the client), on the API's database.
 *
 *   npm run bench:evidence -- [--records 100000] [--ops 500] [--min-rounds 5] [--max-rounds 15]
 */
import { parseArgs } from 'node:util';
import { connectMongo } from '../src/db/mongo';
import { EvidenceRepository } from '../src/evidence/evidence.repository';
import { EvidenceService } from '../src/evidence/evidence.service';
import { EvidenceStore } from '../src/evidence/evidence.store';
import { EvidenceLog } from '../src/evidence/log/evidence-log';
import { generateSigner } from '../src/evidence/log/signed-note';
import { post, withBenchServer } from './support/harness';
import { interleave, printComparison, runOnce, type Variant } from './support/rounds';
import { sequential } from './support/latency';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    ops: { type: 'string', default: '500' },
  },
  allowPositionals: true,
  strict: false,
});
const RECORDS = Number(values.records);
const OPS = Number(values.ops);

const data = (i: number) => ({
  at: new Date(1_790_000_000_000 + i).toISOString(),
  actor: { type: 'api_key', id: 'k3y1d0000000' },
  request: { method: 'POST', path: '/shield/inspect', status: 200, request_id: `req-${i}` },
});

void withBenchServer(async ({ url, cpu, mongoUri, dbName }) => {
  const { client, db } = await connectMongo(mongoUri, dbName);
  const store = new EvidenceStore(db, () => new Date());
  const raw = db.collection<{ _id: string } & Record<string, unknown>>('raw_baseline');
  const compare = async (title: string, variants: Record<string, Variant>) =>
    printComparison(`${title}; one client, sequential`, await interleave(variants, cpu));

  await compare(`Append one record, ${OPS} a round`, {
    'raw MongoDB insert (baseline)': sequential(OPS, (i) =>
      raw.insertOne({ _id: `single-${i}`, accountId: 'usr_raw', seq: i, data: data(i) }),
    ),
    'sealed append': sequential(OPS, (i) =>
      store.append('usr_single', { kind: 'audit.api_key.used', data: data(i) }),
    ),
  });

  const batches = Math.max(1, OPS / 100);
  await compare(`Append 100 records at once, ${batches} batches a round (per record)`, {
    'raw MongoDB insertMany (baseline)': sequential(
      batches,
      (b) =>
        raw.insertMany(
          Array.from({ length: 100 }, (_, i) => ({ _id: `batch-${b}-${i}`, data: data(i) })),
        ),
      100,
    ),
    'sealed appendMany': sequential(
      batches,
      () =>
        store.appendMany(
          'usr_batched',
          Array.from({ length: 100 }, (_, i) => ({ kind: 'audit.api_key.used', data: data(i) })),
        ),
      100,
    ),
  });

  const log = new EvidenceLog(db, generateSigner('bench/evidence').signer, () => new Date());
  const service = new EvidenceService(new EvidenceRepository(db), log);
  const ids = (
    await db
      .collection('evidence')
      .find({ accountId: 'usr_single' }, { projection: { _id: 1 } })
      .toArray()
  ).map((d) => String(d._id));
  const singles = await raw.countDocuments({ accountId: 'usr_raw' });
  await compare(`Verify one record, ${OPS} a round`, {
    'raw MongoDB read by _id (baseline)': sequential(OPS, (i) =>
      raw.findOne({ _id: `single-${i % singles}` }),
    ),
    'EvidenceService.verify': sequential(OPS, (i) =>
      service.verify('usr_single', ids[i % ids.length]!),
    ),
  });

  console.error(`seeding ${RECORDS} records for the export…`);
  const credentials = { email: 'export@example.com', password: 'benchmark password' };
  const { user_id: userId } = await post(`${url}/api/auth/signup`, credentials);
  const { token } = await post(`${url}/api/auth/login`, credentials);
  const { key } = await post(
    `${url}/api/auth/generate-key`,
    {},
    { authorization: `Bearer ${String(token)}` },
  );
  for (let done = 0; done < RECORDS; done += 1000) {
    await store.appendMany(
      String(userId),
      Array.from({ length: Math.min(1000, RECORDS - done) }, (_, i) => ({
        kind: 'audit.api_key.used',
        data: data(done + i),
      })),
    );
  }

  const apiRss = () => cpu.rssMb().get('api') ?? 0;
  const before = apiRss();
  let peak = before;
  let bytes = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, apiRss())), 50);
  const exported = await runOnce(
    `JSON export of ${RECORDS + 1} records`,
    async () => {
      const started = performance.now();
      const res = await fetch(`${url}/audit/export/${String(userId)}`, {
        headers: { 'x-api-key': String(key) },
      });
      if (!res.ok) throw new Error(`export: HTTP ${res.status}`);
      for await (const chunk of res.body!) bytes += (chunk as Uint8Array).length;
      return { ops: RECORDS + 1, latencies: [performance.now() - started] };
    },
    cpu,
  );
  clearInterval(sampler);
  printComparison(
    `The API streaming a JSON export of ${RECORDS + 1} records (${(bytes / 1e6).toFixed(1)} MB); ops are records, p50 the whole export; API process RSS ${before.toFixed(0)} MB before, peak ${peak.toFixed(0)} MB while exporting`,
    exported,
  );
  await client.close();
}, 'api').catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
