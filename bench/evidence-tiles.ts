/**
 * The public log's costs at `--leaves` leaves, each against a baseline measured in the same run:
 * - serving tiles (`/log/tile/…`, `/log/checkpoint`) against a static file of a tile's size served
 *   by the same process (express.static), with autocannon, interleaved over rounds;
 * - sealed appends while the checkpoint signer runs every second, with a real witness
 *   (litewitness, built from the Go module proxy) cosigning each checkpoint and without one.
 *
 *   npm run bench:evidence-tiles -- [--leaves 1000000] [--append-seconds 15] [--writers 8]
 *       [--duration 10] [--connections 10] [--rounds 3]
 *
 * Uses MONGODB_URI when set, otherwise the embedded server.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import express from 'express';
import { MongoClient } from 'mongodb';
import pino from 'pino';
import { ensureIndexes } from '../src/db/mongo';
import { ALL_INDEXES } from '../src/db/indexes';
import { checkpointsIndexes, type CheckpointDoc } from '../src/evidence/log/checkpoints';
import { EvidenceLog } from '../src/evidence/log/evidence-log';
import { EvidenceStore } from '../src/evidence/evidence.store';
import { generateSigner, verifierKey } from '../src/evidence/log/signed-note';
import { tilesOperations } from '../src/evidence/log/tiles.routes';
import { tileIndexPath } from '../src/evidence/log/tiles';
import { parseWitnesses } from '../src/evidence/log/witnesses';
import { bind, mountOperations } from '../src/http/operation';
import { errorHandler } from '../src/http/errors';
import { startLitewitness } from '../test/support/tlog-tools';
import { freePort, provideMongo, type Service } from '../tools/stack';
import { compare, options, report } from './support/harness';
import { seedLeaves } from './support/seed-leaves';

const { values } = parseArgs({
  options: {
    leaves: { type: 'string', default: '1000000' },
    'append-seconds': { type: 'string', default: '15' },
    writers: { type: 'string', default: '8' },
  },
  strict: false,
});
const LEAVES = Number(values.leaves);
const APPEND_SECONDS = Number(values['append-seconds']);
const WRITERS = Number(values.writers);
const quiet = pino({ level: 'silent' });

/** Appends from WRITERS sequential writers (one account each) for APPEND_SECONDS: records per s. */
async function appendRate(store: EvidenceStore, label: string): Promise<number> {
  const until = performance.now() + APPEND_SECONDS * 1000;
  let count = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; performance.now() < until; i++) {
        await store.append(`usr_${label}_${w}`, { kind: 'bench', data: { w, i } });
        count += 1;
      }
    }),
  );
  return count / APPEND_SECONDS;
}

async function main(): Promise<void> {
  let mongo: Service | undefined;
  const dataDir = await mkdtemp(join(tmpdir(), 'tripwire-bench-tiles-'));
  if (!process.env.MONGODB_URI) {
    mongo = await provideMongo({ dataDir, port: await freePort(), log: () => undefined });
  }
  const client = await MongoClient.connect(process.env.MONGODB_URI ?? mongo!.address);
  const db = client.db(`bench_tiles_${Date.now()}`);
  await ensureIndexes(db, ALL_INDEXES);
  const signer = generateSigner('bench.localhost/evidence').signer;
  const witness = await startLitewitness('bench.localhost/witness', {
    origin: signer.name,
    vkey: verifierKey(signer),
  });
  try {
    console.error(`seeding ${LEAVES} leaves and signing a checkpoint over them…`);
    const plain = new EvidenceLog(db, signer, () => new Date(), { log: quiet });
    const size = await seedLeaves(db, 0, LEAVES);
    const integrating = performance.now();
    await plain.checkpoints.issue();
    const integrateSeconds = (performance.now() - integrating) / 1000;

    // The tiles as the API serves them, and a static file of one full tile, from one process.
    const tile = (await plain.tiles.read({ level: 0, index: 0, width: 256 }))!;
    await writeFile(join(dataDir, 'tile'), tile);
    const app = express();
    app.use('/static', express.static(dataDir));
    const router = express.Router();
    mountOperations(router, bind(tilesOperations, plain), {
      none: [],
      session: [],
      apiKey: [],
      sessionOrApiKey: [],
      refreshCookie: [],
    });
    app.use(router);
    app.use(errorHandler);
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const middle = tileIndexPath(Math.floor(size / 512));
    const rows = await compare({
      'static file of 8 KiB (baseline)': { url: `${base}/static/tile` },
      'full level-0 tile (8 KiB)': { url: `${base}/log/tile/0/${middle}` },
      'full entry bundle (8.5 KiB)': { url: `${base}/log/tile/entries/${middle}` },
      'partial level-1 tile': {
        url: `${base}/log/tile/1/${tileIndexPath(Math.floor(size / 65_536))}.p/${Math.floor(size / 256) % 256}`,
      },
      'checkpoint (signed note)': { url: `${base}/log/checkpoint` },
    });
    server.close();

    console.error(`appends for ${APPEND_SECONDS} s each, the signer every second…`);
    const witnessed = new EvidenceLog(db, signer, () => new Date(), {
      log: quiet,
      witnesses: parseWitnesses(witness.entry),
    });
    const rates: Record<string, number[]> = { off: [], on: [] };
    for (let round = 0; round < options.rounds; round++) {
      for (const [mode, log] of [
        ['off', plain],
        ['on', witnessed],
      ] as const) {
        const stop = log.checkpoints.run(1_000, quiet);
        rates[mode]!.push(
          await appendRate(new EvidenceStore(db, () => new Date(), log.leaves), `${mode}${round}`),
        );
        await stop();
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

    console.log(
      `\nLog of ${size} leaves: integrated and signed in ${integrateSeconds.toFixed(1)} s.`,
    );
    report(rows);
    console.log(
      `\n| Sealed appends at ${size}+ leaves (${WRITERS} writers, ${APPEND_SECONDS} s, median of ${options.rounds}) | records per s | vs cosigning off |`,
    );
    console.log('|---|---:|---:|');
    const off = median(rates.off!);
    const on = median(rates.on!);
    console.log(`| signer every 1 s, no witness | ${off.toFixed(0)} | 100 % |`);
    console.log(
      `| signer every 1 s, litewitness cosigning each checkpoint | ${on.toFixed(0)} | ${((on / off) * 100).toFixed(0)} % |`,
    );
    const checkpoints = db.collection<CheckpointDoc>(checkpointsIndexes.collection);
    const [all, cosigned] = await Promise.all([
      checkpoints.countDocuments({ publishedAt: { $gte: new Date(0) } }),
      checkpoints.countDocuments({ 'cosignatures.0': { $exists: true } }),
    ]);
    console.log(
      `\n${all} checkpoints published in all, ${cosigned} of them cosigned by the witness.`,
    );
  } finally {
    await witness.stop();
    await db.dropDatabase();
    await client.close();
    await mongo?.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
