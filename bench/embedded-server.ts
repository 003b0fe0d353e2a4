/**
 * One version of the embedded database (tools/mongo-server) against another: this tree's build and
 * the one at `--against <git ref>` (HEAD unless given: the change not yet committed), each a
 * server of its own started as tools/stack.ts starts it (the same JVM, heap and flags), taking
 * turns at the same writes, so a change to the server is measured against what it replaces in one
 * run. Against the tree's own commit it is an A/A run: how far apart two identical servers land.
 *
 *   npm run bench:embedded-server -- [--against main] [--alerts 1200] [--rate 20]
 *                                    [--min-rounds 5] [--max-rounds 15]
 *
 * The writes are an alert's, as the worker makes them once a webhook answered, on a store with
 * every index the service creates: the delivery's evidence record (its `_id` ordered by the
 * alert's time, as `outcomeLogId` makes it; a random content hash), its log leaf, the account's
 * chain head (`j: true`, as the append makes it durable), the delivery record (an upsert, its
 * `_id` from the storm's event id) and the channel's health. `--rate` alerts a second (20:
 * `bench:alert-path`'s one at a time), `--alerts` a run. Each server first runs them,
 * unmeasured, until its JIT compiler has settled, and each run ends once its server is back at
 * rest, so its commits and compaction after the run count in it (bench/support/warm-up.ts). The
 * table's `database CPU` is that server's, all its threads; the latencies are one alert's writes.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ALL_INDEXES } from '../src/db/indexes';
import { ensureIndexes } from '../src/db/mongo';
import { outcomeLogId } from '../src/alerts/alert-outcomes';
import { stormEventId } from '../src/canaries/threats.repository';
import { buildMongoServer } from '../tools/dev-tools';
import {
  benchLog as log,
  interleaveServers,
  startEmbeddedServer,
  stopEmbeddedServers,
  type EmbeddedServer,
} from './support/embedded-servers';
import { timedSteps } from './support/latency';
import { printComparison } from './support/rounds';
import { randomHash } from './support/sealed-records';

const { values } = parseArgs({
  options: {
    against: { type: 'string', default: 'HEAD' },
    alerts: { type: 'string', default: '1200' },
    rate: { type: 'string', default: '20' },
  },
  strict: false,
});
const ALERTS = Number(values.alerts);
const RATE = Number(values.rate);
if (typeof values.against !== 'string' || !Number.isInteger(ALERTS) || ALERTS < 1 || !(RATE > 0)) {
  console.error(
    'usage: npm run bench:embedded-server -- [--against <git ref>] [--alerts N] [--rate per second]',
  );
  process.exit(2);
}
const against = values.against;

interface Server extends EmbeddedServer {
  seqs: Map<string, number>;
  leaves: number;
}

async function start(dataDir: string, build?: Awaited<ReturnType<typeof buildMongoServer>>) {
  const server = await startEmbeddedServer(dataDir, { build });
  await ensureIndexes(server.db, ALL_INDEXES);
  return { ...server, seqs: new Map(), leaves: 0 } satisfies Server;
}

/** One alert's writes, in the order the worker makes them. */
async function alertWrites(server: Server, n: number): Promise<void> {
  const accountId = `acc_${n % 5}`;
  const seq = (server.seqs.get(accountId) ?? 0) + 1;
  server.seqs.set(accountId, seq);
  const now = new Date();
  const channelId = `chn_${accountId}`;
  const deliveryId = `alert-${stormEventId(`bench|${randomUUID()}`, now)}:${channelId}`;
  const logId = outcomeLogId(deliveryId, now.toISOString());
  const { db } = server;
  await db.collection('evidence').insertMany(
    [
      {
        _id: logId as never,
        accountId,
        seq,
        kind: 'alert.delivery_outcome',
        data: {
          delivery_id: deliveryId,
          workflow_id: deliveryId.split(':')[0],
          channel_id: channelId,
          channel_kind: 'webhook',
          event: 'canary.tripwire_triggered',
          outcome: 'delivered',
          status: 200,
          error: null,
        },
        contentHash: randomHash(),
        prevHash: randomHash(),
        sealedAt: now,
      },
    ],
    { ordered: true },
  );
  await db
    .collection('evidence_leaves')
    .insertOne({ _id: server.leaves++ as never, logId, accountId, seq, hash: randomHash() });
  await db
    .collection('evidence_heads')
    .updateMany(
      { _id: accountId as never },
      { $set: { seq, hash: randomHash(), logId } },
      { upsert: true, writeConcern: { journal: true } },
    );
  await db.collection('alert_deliveries').updateOne(
    { _id: deliveryId as never },
    {
      $set: { outcome: 'delivered', status: 200, error: null, finishedAt: now },
      $setOnInsert: { accountId, channelId, event: 'canary.tripwire_triggered', createdAt: now },
    },
    { upsert: true },
  );
  await db
    .collection('alert_channels')
    .updateOne(
      { _id: channelId as never },
      { $set: { accountId, lastError: null, lastDeliveryAt: now, failingSince: null } },
      { upsert: true },
    );
}

/** `--alerts` alerts' writes at `--rate` a second (or, to warm up, as fast as they go), each timed. */
async function run(server: Server, paced: boolean) {
  const timed = await timedSteps(ALERTS, RATE, paced, (n) => alertWrites(server, n));
  return { ops: ALERTS, ...timed };
}

/** The embedded server's sources at `ref`, built into `folder`. */
async function buildAt(ref: string, folder: string) {
  try {
    execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { stdio: 'ignore' });
  } catch {
    console.error(`--against ${ref}: not a commit of this repository`);
    process.exit(2);
  }
  const archive = execFileSync('git', ['archive', '--format=tar', ref, 'tools/mongo-server']);
  execFileSync('tar', ['-x', '-C', folder], { input: archive });
  return buildMongoServer(log, join(folder, 'tools/mongo-server'), join(folder, 'build'));
}

async function main() {
  const work = await mkdtemp(join(tmpdir(), 'bench-embedded-server-'));
  const servers: Server[] = [];
  try {
    log(`building the embedded server at ${against}`);
    const theirs = await buildAt(against, work);
    servers.push(await start(join(work, 'theirs'), theirs), await start(join(work, 'ours')));
    const [base, ours] = servers as [Server, Server];
    const comparison = await interleaveServers([
      {
        name: `the server at ${against} (baseline)`,
        server: base,
        run: (paced) => run(base, paced),
      },
      { name: 'this tree', server: ours, run: (paced) => run(ours, paced) },
    ]);
    printComparison(
      `one alert's writes, ${ALERTS} a run at ${RATE}/s; the embedded server at ${against} against this tree's`,
      comparison,
    );
  } finally {
    await stopEmbeddedServers(servers, work);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
