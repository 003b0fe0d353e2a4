/**
 * Whether the heap tools/stack.ts gives the embedded server (`embeddedMongoHeapMb`, from the file at
 * start) holds the service's heaviest store in its page cache, with the cache's estimates checked
 * against the heap itself.
 *
 *   npm run bench:page-cache -- [--records 1000000] [--data-dir .data/bench-page-cache]
 *
 * 1. The store: `--records` sealed `threat.hit` records over 100 accounts, each with its Merkle
 *    leaf, under every index the service declares; filled once (minutes at a million) and kept in
 *    the data folder for later runs (a fill cut short is started over), then opened again and
 *    left at rest until compaction is done.
 * 2. Whole: the server started with a heap far larger than the store; once the cache warmer has
 *    read every map (the cache's use stops growing), what the whole store takes in the cache.
 * 3. As started: the heap the rule gives this file; what the warmer put in the cache (it stops at
 *    90 % of the cache), that share of the whole store, and the live heap after a full collection
 *    (`jcmd GC.run`), beside the cache's own estimate of its pages: an estimate below the truth
 *    would let the cache outgrow the heap.
 *
 * Beside the memory: the fill's rate and the server's CPU per record (when this run fills), the
 * server's CPU to warm each cache, and the load average.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ALL_INDEXES } from '../src/db/indexes';
import { ensureIndexes } from '../src/db/mongo';
import type { EvidenceDoc } from '../src/evidence/evidence.repository';
import { leavesIndexes } from '../src/evidence/log/log-leaves';
import { embeddedMongoHeapMb } from '../tools/stack';
import {
  benchLog as log,
  startEmbeddedServer,
  type EmbeddedServer,
} from './support/embedded-servers';
import { processSeconds } from './support/cpu';
import { loadLine } from './support/load';
import { sealedHit } from './support/sealed-records';
import { storeStatus } from './support/store-status';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '1000000' },
    'data-dir': { type: 'string', default: '.data/bench-page-cache' },
  },
  strict: true,
});
const RECORDS = Number(values.records);
if (!Number.isInteger(RECORDS) || RECORDS < 1000) {
  console.error(`--records must be a whole number of at least 1000 (got ${values.records})`);
  process.exit(2);
}
const DATA_DIR = resolve(values['data-dir'], `records-${RECORDS}`);
const FILLED = join(DATA_DIR, 'filled');
const ACCOUNTS = 100;
const BATCH = 1000;
const MB = 2 ** 20;

/** The store's counters (the benchmark runs only on the embedded server, which has them). */
const statusOf = async (server: EmbeddedServer) => (await storeStatus(server.db))!;

/** Polls `read` every `everyMs` until it answers the same `times` times in a row. */
async function steady<T>(read: () => Promise<T>, everyMs: number, times: number, what: string) {
  let last: string | undefined;
  let value: T;
  for (let same = 0; same < times;) {
    value = await read();
    same = JSON.stringify(value) === last ? same + 1 : 0;
    if (same === 0) log(`${what}: ${JSON.stringify(value)}`);
    last = JSON.stringify(value);
    await sleep(everyMs);
  }
  return value!;
}

/** The fill's records a second and the server's CPU per record; null when the store was kept. */
async function fill(): Promise<{ perSecond: number; cpuUs: number } | null> {
  if (await stat(FILLED).catch(() => null)) {
    log(`the store of ${RECORDS} records is in ${DATA_DIR} already`);
    return null;
  }
  // A fill cut short is started over: only a whole one leaves the mark.
  await rm(DATA_DIR, { recursive: true, force: true });
  await mkdir(DATA_DIR, { recursive: true });
  const server = await startEmbeddedServer(DATA_DIR);
  await ensureIndexes(server.db, ALL_INDEXES);
  const pid = server.mongo.process.child.pid!;
  const cpuBefore = processSeconds(pid);
  const started = Date.now();
  for (let seq = 0; seq < RECORDS;) {
    const records = Array.from({ length: Math.min(BATCH, RECORDS - seq) }, () => {
      seq++;
      return sealedHit(`acc_bench_${seq % ACCOUNTS}`, seq);
    });
    await server.db.collection<EvidenceDoc>('evidence').insertMany(records);
    await server.db.collection(leavesIndexes.collection).insertMany(
      records.map((r) => ({
        _id: r.seq - 1,
        logId: r._id,
        accountId: r.accountId,
        seq: r.seq,
        contentHash: r.contentHash,
      })) as never[],
    );
    if (seq % 100_000 === 0) log(`filled ${seq} in ${Math.round((Date.now() - started) / 1000)} s`);
  }
  const filled = {
    perSecond: RECORDS / ((Date.now() - started) / 1000),
    cpuUs: ((processSeconds(pid) - cpuBefore) * 1e6) / RECORDS,
  };
  await server.client.close();
  await server.mongo.stop();
  await writeFile(FILLED, `${RECORDS}\n`);
  return filled;
}

/**
 * The server at rest until compaction is done: the file's size and how full it and its chunks are
 * unchanged for two minutes (a pass can grow the file before it cuts it); the file's size then.
 */
async function compact(): Promise<number> {
  const server = await startEmbeddedServer(DATA_DIR);
  const { fileBytes } = await steady(
    async () => {
      const { fileBytes, fileFillPercent, chunksFillPercent } = await statusOf(server);
      return { fileBytes, fileFillPercent, chunksFillPercent };
    },
    30_000,
    4,
    'compacting',
  );
  await server.client.close();
  await server.mongo.stop();
  return fileBytes;
}

/**
 * Once the cache's use stops growing: the file, the cache and its use, the server's CPU seconds
 * until then (the warming, the polls' idle tail adding next to nothing), and the live heap.
 */
async function opened(heapMb: number) {
  const server = await startEmbeddedServer(DATA_DIR, { heapMb });
  const cpuBefore = processSeconds(server.mongo.process.child.pid!);
  const used = await steady(async () => (await statusOf(server)).cacheUsedMB, 5_000, 3, 'cache MB');
  const { cacheMB } = await statusOf(server);
  const warmCpuS = processSeconds(server.mongo.process.child.pid!) - cpuBefore;
  const pid = String(server.mongo.process.child.pid);
  execFileSync('jcmd', [pid, 'GC.run']);
  const info = execFileSync('jcmd', [pid, 'GC.heap_info'], { encoding: 'utf8' });
  const liveKb = [...info.matchAll(/(?:new|tenured) generation\s+total \d+K, used (\d+)K/g)].reduce(
    (sum, m) => sum + Number(m[1]),
    0,
  );
  await server.client.close();
  await server.mongo.stop();
  return { heapMb, cacheMb: cacheMB, usedMb: used, warmCpuS, liveMb: liveKb / 1024 };
}

async function main(): Promise<void> {
  const loadBefore = loadavg();
  const filled = await fill();
  const file = (await compact()) / MB;
  const whole = await opened(Math.floor(Math.min(totalmem() / 2 / MB, 512 + 3 * file)));
  if (whole.usedMb >= whole.cacheMb * 0.9) {
    console.error(`the store did not fit a ${whole.heapMb} MB heap's cache: no whole figure`);
    process.exit(1);
  }
  const rule = await opened(embeddedMongoHeapMb(file * MB));
  const mb = (n: number) => Math.round(n).toLocaleString('en-US');
  console.log(
    [
      `${RECORDS.toLocaleString('en-US')} sealed records with their leaves, a ${mb(file)} MB file:`,
      '',
      `> ${loadLine(loadBefore)}`,
      '',
      '| Heap | Cache | In the cache | Of the whole store | Server CPU to warm it | Live heap after a full collection |',
      '| ---: | ---: | ---: | ---: | ---: | ---: |',
      ...[whole, rule].map(
        (r) =>
          `| ${mb(r.heapMb)} MB | ${mb(r.cacheMb)} MB | ${mb(r.usedMb)} MB (${(r.usedMb / file).toFixed(2)}× the file) | ${Math.round((100 * r.usedMb) / whole.usedMb)} % | ${r.warmCpuS.toFixed(1)} s | ${mb(r.liveMb)} MB |`,
      ),
      '',
      `The first row's heap holds the whole store; the second is the one tools/stack.ts gives this file.`,
      filled
        ? `This run filled the store: ${mb(filled.perSecond)} records a second, ${filled.cpuUs.toFixed(0)} µs of the server's CPU per record (with its leaf).`
        : 'The store was filled by an earlier run (its rate and CPU are in that run).',
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
