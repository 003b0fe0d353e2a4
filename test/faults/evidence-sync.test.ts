/**
 * Fault suite, the evidence append's one sync: the records and their Merkle leaves are written
 * without waiting for the disk, and the chain head's journaled write makes them durable. Here the
 * database process (a real one, of this file's own) is SIGKILLed just before one of those writes
 * reaches it and started again; the server may have lost the unsynced writes itself (mongod keeps
 * them in memory for up to 100 ms, the embedded server until its next commit), and the cases take
 * out the rest of them too, as a power loss would.
 * The same store, as a long-running process keeps it, then appends again: the failed append's
 * records retried under their log ids and new ones. Every acknowledged record must still be
 * there, the chain must have no gap or repeat, and the log one leaf per record at indexes
 * 0, 1, 2, … with none skipped.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db, MongoClient } from 'mongodb';
import { freePort, startLocalMongo, type LocalMongo } from '../../tools/stack';
import { ensureIndexes } from '../../src/db/mongo';
import { ChainWalk } from '../../src/evidence/chain-walk';
import {
  chainHeadsIndexes,
  evidenceIndexes,
  type EvidenceDoc,
} from '../../src/evidence/evidence.repository';
import { EvidenceStore } from '../../src/evidence/evidence.store';
import { leavesIndexes, type LeafDoc } from '../../src/evidence/log/log-leaves';
import { killableClient } from '../support/mongo-killer';

jest.setTimeout(240_000);

let dir: string;
let port: number;
let mongo: LocalMongo;
let client: MongoClient;
let db: Db;
let store: EvidenceStore;
/** Kills the database just before its next write of that command name on that collection. */
let killBefore: (command: string, collection: string) => void;

const start = async () => {
  mongo = await startLocalMongo({ dataDir: dir, port, log: () => undefined });
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tripwire-evidence-sync-'));
  port = await freePort();
  await start();
  ({ client, killBefore } = await killableClient(() => mongo));
  db = client.db('evidence-sync');
  await ensureIndexes(db, [evidenceIndexes, chainHeadsIndexes, leavesIndexes]);
  store = new EvidenceStore(db, () => new Date());
});

afterAll(async () => {
  await client?.close();
  await mongo?.stop();
  await rm(dir, { recursive: true, force: true });
});

const input = (accountId: string, n: number) => ({
  logId: `evd_${accountId}_${n}`,
  kind: 'test.entry',
  data: { n },
});

/**
 * Of the writes not synced, what is taken out after the restart (as a database that lost them
 * would hold it), beyond what the server itself lost (the embedded server commits `j: false`
 * writes with the next commit, so its kill may already have taken them).
 */
type Lost = 'nothing more' | 'the leaves' | 'the records and the leaves';

async function verifyAll(acknowledged: string[]) {
  const records = await db
    .collection<EvidenceDoc>('evidence')
    .find({})
    .sort({ accountId: 1, seq: 1 })
    .toArray();
  const byAccount = new Map<string, EvidenceDoc[]>();
  for (const r of records) byAccount.set(r.accountId, [...(byAccount.get(r.accountId) ?? []), r]);
  for (const [accountId, chain] of byAccount) {
    const walk = new ChainWalk(accountId);
    for (const r of chain) {
      walk.add({
        log_id: r._id,
        seq: r.seq,
        kind: r.kind,
        sealed_at: r.sealedAt.toISOString(),
        prev_hash: r.prevHash,
        content_hash: r.contentHash!,
        data: r.data,
      });
    }
    const head = await db.collection('evidence_heads').findOne({ _id: accountId as never });
    expect({ accountId, ...walk.finish(head?.seq ?? null) }).toMatchObject({
      accountId,
      intact: true,
      missing_seqs: [],
    });
    expect(head?.seq).toBe(chain.at(-1)!.seq);
  }
  const leaves = await db
    .collection<LeafDoc>('evidence_leaves')
    .find({})
    .sort({ _id: 1 })
    .toArray();
  expect(leaves.map((l) => l._id)).toEqual(leaves.map((_, i) => i));
  expect(leaves.map((l) => l.logId).sort()).toEqual(records.map((r) => r._id).sort());
  const hashes = new Map(records.map((r) => [r._id, r.contentHash]));
  for (const leaf of leaves) expect(leaf.contentHash).toBe(hashes.get(leaf.logId));
  const stored = new Set(records.map((r) => r._id));
  expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
}

const acknowledged: string[] = [];

describe.each([
  ['insert', 'evidence_leaves', 'nothing more'],
  ['update', 'evidence_heads', 'nothing more'],
  ['update', 'evidence_heads', 'the leaves'],
  ['update', 'evidence_heads', 'the records and the leaves'],
] as const)('the database SIGKILLed before the %s of %s', (command, collection, lost: Lost) => {
  it(`when it comes back and ${lost} of what was not synced is lost, then the chains and the log verify and every acknowledged record is there`, async () => {
    const accounts = [`${collection}_${lost}_a`, `${collection}_${lost}_b`].map((a) =>
      a.replace(/\W/g, '_'),
    );
    // Two records each, acknowledged: the chains and the leaf log's end are what the store remembers.
    for (const a of accounts) {
      const records = await store.appendMany(a, [input(a, 1), input(a, 2)]);
      acknowledged.push(...records.map((r) => r.id));
    }
    const leavesBefore = await db.collection('evidence_leaves').countDocuments();

    killBefore(command, collection);
    // Both accounts at once: when the database dies, the other's writes are in flight or waiting.
    const failed = await Promise.allSettled(
      accounts.map((a) => store.appendMany(a, [input(a, 3), input(a, 4)])),
    );
    expect(failed.map((f) => f.status)).toEqual(['rejected', 'rejected']);
    await mongo.process.exited;
    await start();

    if (lost !== 'nothing more') {
      await db.collection('evidence_leaves').deleteMany({ _id: { $gte: leavesBefore } as never });
    }
    if (lost === 'the records and the leaves') {
      await db.collection('evidence').deleteMany({ accountId: { $in: accounts }, seq: { $gt: 2 } });
    }

    // The caller retries the failed append (same log ids), and appends more.
    for (const a of accounts) {
      const retried = await store.appendMany(a, [input(a, 3), input(a, 4)]);
      const more = await store.appendMany(a, [input(a, 5)]);
      expect([...retried, ...more].map((r) => r.seq)).toEqual([3, 4, 5]);
      acknowledged.push(...[...retried, ...more].map((r) => r.id));
    }
    await verifyAll(acknowledged);
  });
});
