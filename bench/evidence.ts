/**
 * The evidence log's costs, each against plain MongoDB work in the same run:
 * - sealed appends (canonical JSON, SHA-256, chain) against raw inserts of the same documents,
 *   one at a time and in batches of 100;
 * - record verifications (`EvidenceService.verify`: two reads and a hash) against raw reads;
 * - the API process's peak memory while it streams a 100,000-record JSON export.
 *
 *   npm run bench:evidence -- [--records 100000] [--ops 2000]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { connectMongo } from '../src/db/mongo';
import { EvidenceRepository } from '../src/evidence/evidence.repository';
import { EvidenceService } from '../src/evidence/evidence.service';
import { EvidenceStore } from '../src/evidence/evidence.store';
import { EvidenceLog } from '../src/evidence/log/evidence-log';
import { generateSigner } from '../src/evidence/log/signed-note';
import { post, withBenchServer } from './support/harness';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    ops: { type: 'string', default: '2000' },
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

async function rate(n: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) await op(i);
  return n / ((performance.now() - started) / 1000);
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

void withBenchServer(async ({ url, pid, mongoUri, dbName }) => {
  const { client, db } = await connectMongo(mongoUri, dbName);
  const store = new EvidenceStore(db, () => new Date());
  const raw = db.collection<{ _id: string } & Record<string, unknown>>('raw_baseline');
  const rows: [string, number, number][] = [];

  console.error(`single writes (${OPS} each)…`);
  const rawSingle = await rate(OPS, (i) =>
    raw.insertOne({ _id: `single-${i}`, accountId: 'usr_raw', seq: i, data: data(i) }),
  );
  const sealedSingle = await rate(OPS, (i) =>
    store.append('usr_single', { kind: 'audit.api_key.used', data: data(i) }),
  );
  rows.push(['append one record', sealedSingle, rawSingle]);

  console.error(`batched writes (${OPS} in batches of 100)…`);
  const batches = OPS / 100;
  const rawBatched =
    (await rate(batches, (b) =>
      raw.insertMany(
        Array.from({ length: 100 }, (_, i) => ({ _id: `batch-${b}-${i}`, data: data(i) })),
      ),
    )) * 100;
  const sealedBatched =
    (await rate(batches, () =>
      store.appendMany(
        'usr_batched',
        Array.from({ length: 100 }, (_, i) => ({ kind: 'audit.api_key.used', data: data(i) })),
      ),
    )) * 100;
  rows.push(['append 100 records at once (per record)', sealedBatched, rawBatched]);

  console.error(`verifications (${OPS} each)…`);
  const log = new EvidenceLog(db, generateSigner('bench/evidence').signer, () => new Date());
  const service = new EvidenceService(new EvidenceRepository(db), log);
  const ids = (
    await db
      .collection('evidence')
      .find({ accountId: 'usr_single' }, { projection: { _id: 1 } })
      .toArray()
  ).map((d) => String(d._id));
  const rawReads = await rate(OPS, (i) => raw.findOne({ _id: `single-${i % OPS}` }));
  const verifies = await rate(OPS, (i) => service.verify('usr_single', ids[i % ids.length]!));
  rows.push(['verify one record', verifies, rawReads]);

  console.log(
    '\n| Operation (one client, sequential) | sealed per s | raw MongoDB per s | ratio |',
  );
  console.log('|---|---:|---:|---:|');
  for (const [name, sealed, baseline] of rows) {
    console.log(
      `| ${name} | ${sealed.toFixed(0)} | ${baseline.toFixed(0)} | ${((sealed / baseline) * 100).toFixed(0)} % |`,
    );
  }

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

  const before = rssMb(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50);
  const started = performance.now();
  const res = await fetch(`${url}/audit/export/${String(userId)}`, {
    headers: { 'x-api-key': String(key) },
  });
  let bytes = 0;
  for await (const chunk of res.body!) bytes += (chunk as Uint8Array).length;
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  console.log(
    `\nJSON export of ${RECORDS + 1} records: ${(bytes / 1e6).toFixed(1)} MB in ${seconds.toFixed(1)} s;`,
  );
  console.log(
    `API process RSS ${before.toFixed(0)} MB before, peak ${peak.toFixed(0)} MB while exporting.`,
  );
  await client.close();
}, 'api').catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
