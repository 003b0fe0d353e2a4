import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import request from 'supertest';
import { EvidenceLog } from '../../src/evidence/log/evidence-log';
import { recordLeafHash } from '../../src/evidence/log/log-tree';
import { tileIndexPath } from '../../src/evidence/log/tiles';
import {
  cosignatureTime,
  generateSigner,
  openNote,
  parseCheckpoint,
  parseCosignerKey,
  splitNote,
  verifierKey,
} from '../../src/evidence/log/signed-note';
import { EvidenceStore } from '../../src/evidence/evidence.store';
import { witnessCosignatures } from '../../src/metrics';
import { createKey, signUpAndLogIn } from '../support/accounts';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';
import { startLitewitness, tlogMirror, type RunningWitness } from '../support/tlog-tools';

const execute = promisify(execFile);
const signer = generateSigner('tripwire.test/tiles').signer;
const vkey = verifierKey(signer);

let t: TestApp;
let server: Server;
let base: string;
let witness: RunningWitness;
let store: EvidenceStore;

beforeAll(async () => {
  // Built once into the cache (minutes the first time), then reused by every run.
  const [w] = await Promise.all([
    startLitewitness('witness.test/w1', { origin: signer.name, vkey }),
    tlogMirror(),
  ]);
  witness = w;
  t = await createTestApp({ signer, config: testConfig({ EVIDENCE_WITNESSES: witness.entry }) });
  store = new EvidenceStore(t.mongo.db, () => new Date());
  server = t.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 600_000);
afterAll(async () => {
  server?.close();
  await t?.close();
  await witness?.stop();
});

/** Runs a tool and answers its exit code and output, without throwing on a non-zero exit. */
async function tool(command: string, args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await execute(command, args, { timeout: 120_000 });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

const tsTool = (script: string, args: string[]) =>
  tool(process.execPath, ['--import', 'tsx', script, ...args]);

/** The monitor against the test's API, or another (the last argument when it is a URL). */
const monitor = (state: string, ...args: string[]) => {
  const url = args.at(-1)?.startsWith('http') ? args.pop()! : base;
  return tsTool('tools/evidence-monitor.ts', [
    url,
    '--public-key',
    vkey,
    '--state',
    state,
    ...args,
  ]);
};

async function seal(n: number, account = 'usr_tiles') {
  return store.appendMany(
    account,
    Array.from({ length: n }, (_, i) => ({ kind: 'test.tile', data: { i } })),
  );
}

describe('the log as tlog-tiles', () => {
  it('when 600 records are sealed and published, then an independent tiles client mirrors and verifies all of them', async () => {
    const records = await seal(600);
    const published = (await t.checkpoints.issue())!;

    const out = join(await mkdtemp(join(tmpdir(), 'mirror-')), 'entries');
    const mirrored = await tool(await tlogMirror(), ['-vkey', vkey, `${base}/log`, out]);
    expect(mirrored).toMatchObject({ code: 0 });

    const [head, ...lines] = (await readFile(out, 'utf8')).trim().split('\n');
    expect(head).toBe(
      `${published._id} ${Buffer.from(published.rootHash, 'hex').toString('base64')}`,
    );
    expect(lines).toHaveLength(published._id);
    const entries = new Map(lines.map((l) => l.split(' ') as [string, string]));
    for (const record of records) {
      expect(entries.get(String(record.leafIndex))).toBe(record.contentHash);
    }
  });

  it('when tiles are fetched, then full ones are immutable, partial ones cut to width and unknown ones 404', async () => {
    await seal(300);
    const { _id: size } = (await t.checkpoints.issue())!;
    const full = await request(t.app).get('/log/tile/0/000').expect(200);
    expect(full.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(full.headers['content-type']).toBe('application/octet-stream');
    expect(full.body).toHaveLength(256 * 32);
    const leaves = await t.mongo.db
      .collection<{ _id: number; contentHash: string }>('evidence_leaves')
      .find({ _id: { $lt: 2 } })
      .sort({ _id: 1 })
      .toArray();
    expect((full.body as Buffer).subarray(32, 64)).toEqual(recordLeafHash(leaves[1]!.contentHash));

    const width = size % 256;
    const last = tileIndexPath(Math.floor(size / 256));
    const partial = await request(t.app).get(`/log/tile/entries/${last}.p/${width}`).expect(200);
    expect(partial.body).toHaveLength(width * 34);
    await request(t.app)
      .get(`/log/tile/1/000.p/${Math.floor(size / 256)}`)
      .expect(200);

    const missing = await request(t.app).get('/log/tile/0/x001/000').expect(404);
    expect(missing.body.detail).toMatch(/not in the log yet/);
    for (const bad of ['0/1', '0/000.p/256', '64/000', '0/x000/001', 'entries/000.p/0']) {
      const res = await request(t.app).get(`/log/tile/${bad}`).expect(422);
      expect(res.body.detail).toMatch(/tile path/);
    }
  });
});

describe('inclusion promises', () => {
  it('when a message is inspected, then the sealed record comes with a promise the offline verifier checks against a later checkpoint', async () => {
    const who = await signUpAndLogIn(t.app);
    const { key } = await createKey(t.app, who.token, { scopes: ['shield:*', 'audit:*'] });
    const inspected = await request(t.app)
      .post('/shield/inspect')
      .set('X-API-Key', key)
      .send({ user_id: who.userId, user_message: 'hello' })
      .expect(200);
    const { promise, log_id } = inspected.body.evidence;
    expect(promise).toMatchObject({ leaf_index: expect.any(Number), log_id: expect.any(String) });

    const verified = await request(t.app).post(`/audit/verify/${log_id}`).set('X-API-Key', key);
    expect(verified.body.promise).toEqual(promise); // the same bytes: made again from the record
    const dir = await mkdtemp(join(tmpdir(), 'promise-'));
    await writeFile(join(dir, 'write.json'), JSON.stringify(inspected.body));
    await writeFile(join(dir, 'verify.json'), JSON.stringify(verified.body));
    const args = ['--promise', join(dir, 'write.json'), '--public-key', vkey];
    const ok = await tsTool('tools/verify-evidence.ts', [
      ...args,
      '--inclusion',
      join(dir, 'verify.json'),
    ]);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^VERIFIED: leaf \d+ .* included in checkpoint tripwire.test\/tiles/);

    // A promise for another leaf than the proof's: the log would have broken it.
    const forged = structuredClone(verified.body);
    forged.inclusion.leaf_index += 1;
    forged.inclusion.proof = [];
    await writeFile(join(dir, 'forged.json'), JSON.stringify(forged));
    const broken = await tsTool('tools/verify-evidence.ts', [
      ...args,
      '--inclusion',
      join(dir, 'forged.json'),
    ]);
    expect(broken).toMatchObject({ code: 1 });
    expect(broken.out).toMatch(
      /^FAILED: the checkpoint of size \d+ does not hold the promised leaf/,
    );

    const other = generateSigner('tripwire.test/tiles').signer;
    const wrongKey = await tsTool('tools/verify-evidence.ts', [
      '--promise',
      join(dir, 'write.json'),
      '--public-key',
      verifierKey(other),
    ]);
    expect(wrongKey.out).toMatch(/^FAILED: the promise: no signature by a trusted key/);
  });
});

describe('one checkpoint signer', () => {
  it('when two replicas run, then one holds the lease, the other gets its checkpoints from it, and it takes over when the holder stops', async () => {
    const quiet = pino({ level: 'silent' });
    const replicas = [0, 1].map(
      () =>
        new EvidenceLog(t.appMongo.db, signer, () => new Date(), { log: quiet, leaseMs: 1_000 }),
    );
    const stops = replicas.map((r) => r.checkpoints.run(60_000, quiet));
    try {
      // The app's own lease (from the tests before) lapses first; then one replica takes it.
      const holderOf = async () => {
        const lease = await replicas[0]!.checkpoints.lease.current();
        return replicas.findIndex((r) => r.checkpoints.lease.holder === lease?.holder);
      };
      let holder = await holderOf();
      while (holder < 0) {
        await new Promise((done) => setTimeout(done, 100));
        holder = await holderOf();
      }
      const lease = (await replicas[0]!.checkpoints.lease.current())!;
      const other = replicas[1 - holder]!;

      await seal(5);
      const asked = (await other.checkpoints.issue())!;
      expect(asked._id).toBe(await other.leaves.size()); // signed by the holder, on request
      expect((await other.checkpoints.lease.current())!.holder).toBe(lease.holder);

      await stops[holder]!();
      await seal(3);
      const after = (await other.checkpoints.issue())!;
      expect(after._id).toBe(asked._id + 3);
      expect((await other.checkpoints.lease.current())!.holder).toBe(
        other.checkpoints.lease.holder,
      );
    } finally {
      await Promise.all(stops.map((stop) => stop()));
    }
  });

  it('when the holder dies without giving the lease up, then a replica asking for a checkpoint takes over once it lapses', async () => {
    const quiet = pino({ level: 'silent' });
    const [dead, alive] = [0, 1].map(
      () =>
        new EvidenceLog(t.appMongo.db, signer, () => new Date(), { log: quiet, leaseMs: 1_000 }),
    );
    await seal(2);
    await dead!.checkpoints.issue(); // holds the lease now, and never renews it
    expect((await alive!.checkpoints.lease.current())!.holder).toBe(dead!.checkpoints.lease.holder);

    await seal(2);
    const checkpoint = (await alive!.checkpoints.issue())!;
    expect(checkpoint._id).toBe(await alive!.leaves.size());
    expect((await alive!.checkpoints.lease.current())!.holder).toBe(
      alive!.checkpoints.lease.holder,
    );
    await alive!.checkpoints.lease.release();
  });
});

describe('witnesses and monitors', () => {
  const cosigned = async (app = t) => {
    const note = (await request(app.app).get('/log/checkpoint').expect(200)).text;
    const { text, signatures } = splitNote(note);
    return {
      size: parseCheckpoint(openNote(note, [signer])).size,
      time: cosignatureTime(text, signatures, parseCosignerKey(witness.vkey)),
    };
  };

  it('when checkpoints are published, then litewitness cosigns each and a monitor holding its key passes them', async () => {
    await seal(7);
    await t.checkpoints.issue();
    const first = await cosigned();
    expect(first.time).toEqual(expect.any(Number));

    const state = await mkdtemp(join(tmpdir(), 'monitor-'));
    const seen = await monitor(state, '--witness', witness.vkey);
    expect(seen.out).toMatch(
      new RegExp(`^OK: tripwire.test/tiles size ${first.size}; ${first.size} new entries`),
    );

    await seal(300); // across a tile boundary: the consistency proof from the witness's last size
    await t.checkpoints.issue();
    const second = await cosigned();
    expect(second.size).toBe(first.size + 300);
    expect(second.time).toEqual(expect.any(Number));
    const grown = await monitor(state, '--witness', witness.vkey);
    expect(grown).toMatchObject({ code: 0 });
    expect(grown.out).toMatch(`extends size ${first.size} seen before; 300 new entries mirrored`);
  });

  it('when the operator rewrites an entry and re-signs, then the witness refuses to cosign and the monitor reports the rewrite', async () => {
    const state = await mkdtemp(join(tmpdir(), 'monitor-'));
    await seal(2);
    await t.checkpoints.issue();
    expect(await monitor(state, '--witness', witness.vkey)).toMatchObject({ code: 0 });

    // The fork: leaf 3 swapped for another hash, and the tree and checkpoints rebuilt over it by a
    // freshly started API (nothing of the honest log in its memory).
    const db = t.mongo.db;
    const forged = 'ab'.repeat(32);
    await db
      .collection('evidence_leaves')
      .updateOne({ _id: 3 as never }, { $set: { contentHash: forged } });
    await db.collection('evidence_nodes').deleteMany({});
    await db.collection('evidence_checkpoints').deleteMany({});
    await seal(1);
    const forker = await createTestApp({ signer, config: t.config });
    const forkServer = forker.app.listen(0, '127.0.0.1');
    try {
      await once(forkServer, 'listening');
      await forker.checkpoints.issue();
      const forkBase = `http://127.0.0.1:${(forkServer.address() as AddressInfo).port}`;

      const fork = await cosigned(forker);
      expect(fork.time).toBeNull(); // published, but the witness would not cosign it
      const outcomes = (await witnessCosignatures.get()).values;
      expect(outcomes).toContainEqual(
        expect.objectContaining({ labels: { witness: 'witness.test/w1', outcome: 'refused' } }),
      );

      const watched = await monitor(state, '--witness', witness.vkey, forkBase);
      expect(watched.code).toBe(1);
      expect(watched.out).toMatch(
        new RegExp(
          `^FAILED: fork at size ${fork.size}: entry 3 was rewritten: mirrored [0-9a-f]{64}, now served ${forged}`,
        ),
      );

      const fresh = await mkdtemp(join(tmpdir(), 'monitor-'));
      const unwitnessed = await monitor(fresh, '--witness', witness.vkey, forkBase);
      expect(unwitnessed.code).toBe(1);
      expect(unwitnessed.out).toMatch(
        `FAILED: checkpoint size ${fork.size} lacks the cosignature of witness.test/w1`,
      );
    } finally {
      forkServer.close();
      await forker.disconnect(); // not close(): the database is t's, dropped at the end
    }
  });
});
