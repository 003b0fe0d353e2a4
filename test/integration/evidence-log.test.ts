import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import request from 'supertest';
import { evidenceExportView, type EvidenceExport } from '../../src/evidence/export/evidence-export';
import { EvidenceStore } from '../../src/evidence/evidence.store';
import { verifyExport } from '../../src/evidence/export/export-verifier';
import { recordLeafHash } from '../../src/evidence/log/log-tree';
import { verifyConsistency, verifyInclusion } from '../../src/evidence/log/merkle';
import { contentHash } from '../../src/evidence/seal';
import {
  generateSigner,
  openNote,
  parseCheckpoint,
  verifierKey,
  type NoteVerifier,
} from '../../src/evidence/log/signed-note';
import { chainReportView } from '../../src/evidence/evidence.service';
import { createKey, signUpAndLogIn, type SignedIn } from '../support/accounts';
import { verifyEvidenceCli } from '../support/verify-evidence-cli';
import { createTestApp, type TestApp } from '../support/test-app';

const run = promisify(execFile);

let t: TestApp;
let stores: EvidenceStore[];

beforeAll(async () => {
  t = await createTestApp();
  // Two writers on one database, as two API processes would be.
  stores = [
    new EvidenceStore(t.mongo.db, () => new Date()),
    new EvidenceStore(t.mongo.db, () => new Date()),
  ];
});
afterAll(() => t.close());

interface Account extends SignedIn {
  key: string;
}

async function account(plan: 'free' | 'pro' = 'free'): Promise<Account> {
  const who = await signUpAndLogIn(t.app);
  const { key } = await createKey(t.app, who.token, { scopes: ['audit:*', 'honeypot:*'] });
  if (plan !== 'free') {
    await t.mongo.db
      .collection('users')
      .updateOne({ _id: who.userId as never }, { $set: { plan } });
  }
  return { ...who, key };
}

const seal = (who: Account, n: number) =>
  stores[0]!.appendMany(
    who.userId,
    Array.from({ length: n }, (_, i) => ({ kind: 'test.note', data: { note: `n${i}`, i } })),
  );

/** Runs `work` while both writers keep appending to the account; at least one append lands. */
async function whileAppending<T>(who: Account, work: () => Promise<T>): Promise<T> {
  let stop = false;
  let appended = 0;
  const writers = stores.map(async (store, w) => {
    for (let i = 0; !stop || appended === 0; i++) {
      await store.append(who.userId, { kind: 'test.load', data: { writer: w, i } });
      appended += 1;
    }
  });
  try {
    return await work();
  } finally {
    stop = true;
    await Promise.all(writers);
  }
}

/** Through the console's route: an API key's use would itself append an audit record meanwhile. */
async function exportJson(who: Account): Promise<EvidenceExport> {
  const res = await request(t.app)
    .get('/api/audit/export')
    .set('Authorization', `Bearer ${who.token}`);
  expect(res.status).toBe(200);
  return evidenceExportView.parse(res.body);
}

const keys = (): NoteVerifier[] => [t.signer];

describe('the chain check under load (re-measured: 14 of 15 false alarms before)', () => {
  it('when two writers append during 15 checks, then every check is intact up to its head', async () => {
    const who = await account();
    await seal(who, 3);
    const reports = await whileAppending(who, async () => {
      const out = [];
      for (let i = 0; i < 15; i++) {
        out.push(
          chainReportView.parse(
            (await request(t.app).get(`/audit/chain/${who.userId}`).set('X-API-Key', who.key)).body,
          ),
        );
      }
      return out;
    });
    for (const report of reports) {
      expect(report).toMatchObject({ intact: true, missing_seqs: [], first_broken_link: null });
      expect(report.records_checked).toBe(report.head!.seq);
    }
  });

  it('when a console force-delete removed hits, then the gap is listed as removed and the chain is intact', async () => {
    const who = await account();
    const trap = await request(t.app)
      .post('/honeypot/traps')
      .set('X-API-Key', who.key)
      .send({ name: 'admin panel', kind: 'endpoint' })
      .expect(201);
    await request(t.app).get(new URL(trap.body.decoys[0].value).pathname).expect(200);
    await t.tripwires.flush();
    await seal(who, 1);
    await request(t.app)
      .delete(`/honeypot/traps/${trap.body.trap_id}?force=true`)
      .set('Authorization', `Bearer ${who.token}`)
      .expect(200);
    const report = chainReportView.parse(
      (await request(t.app).get(`/audit/chain/${who.userId}`).set('X-API-Key', who.key)).body,
    );
    expect(report.intact).toBe(true);
    expect(report.missing_seqs).toEqual([]);
    expect(report.removed_seqs).toEqual([
      { from: expect.any(Number), to: expect.any(Number), removed_by: expect.any(String) },
    ]);

    const verdict = verifyExport(await exportJson(who), keys());
    expect(verdict.ok).toBe(true);
    expect(verdict.line).toMatch(/removals sealed for seq \d+–\d+/);
  });
});

describe('exports cut at one point', () => {
  it('when records are appended during a JSON export, then it lists exactly the records up to its cut', async () => {
    const who = await account();
    await seal(who, 5);
    const exported = await whileAppending(who, () => exportJson(who));
    const seqs = exported.records.map((r) => r.seq);
    expect(seqs).toEqual(Array.from({ length: exported.cut.head!.seq }, (_, i) => i + 1));
    expect(exported.records.at(-1)!.content_hash).toBe(exported.cut.head!.content_hash);
    expect(exported.summary.last_seq).toBe(exported.cut.head!.seq);
    expect(exported.cut.checkpoint!.size).toBeGreaterThan(
      Math.max(...exported.records.map((r) => r.leaf_index!)),
    );
    expect(verifyExport(exported, keys())).toMatchObject({ ok: true, failed: null });
  });
});

describe('two API processes appending while checkpoints are issued', () => {
  it('when both append and both sign, then leaves are contiguous, one per record, and every checkpoint extends the last', async () => {
    const second = await createTestApp({ config: { ...t.config }, signer: t.signer });
    try {
      const accounts = [await account(), await account()];
      const issued = new Set<number>();
      const issuers = [t.checkpoints, second.checkpoints];
      let stop = false;
      const signing = issuers.map(async (c) => {
        while (!stop) {
          const cp = await c.issue();
          if (cp) issued.add(cp._id);
        }
      });
      const writers = [t, second].flatMap((app, a) =>
        accounts.map(async (who) => {
          const store = new EvidenceStore(app.mongo.db, () => new Date());
          for (let i = 0; i < 8; i++) {
            await store.appendMany(who.userId, [
              { kind: 'test.race', data: { app: a, i } },
              { kind: 'test.race', data: { app: a, i, second: true } },
            ]);
          }
        }),
      );
      await Promise.all(writers);
      stop = true;
      await Promise.all(signing);
      const final = (await t.checkpoints.issue())!;
      issued.add(final._id);

      const leaves = await t.mongo.db
        .collection('evidence_leaves')
        .find()
        .sort({ _id: 1 })
        .toArray();
      expect(leaves.map((l) => l._id)).toEqual(leaves.map((_, i) => i));
      const leafOf = new Set(leaves.map((l) => String(l.logId)));
      expect(leafOf.size).toBe(leaves.length);
      const records = await t.mongo.db.collection('evidence').find().project({ _id: 1 }).toArray();
      expect(records.filter((r) => !leafOf.has(String(r._id)))).toEqual([]);
      expect(final._id).toBe(leaves.length);

      const sizes = [...issued].sort((a, b) => a - b);
      for (const [from, to] of sizes.slice(1).map((s, i) => [sizes[i]!, s] as const)) {
        const res = await request(t.app)
          .get(`/api/log/consistency?from=${from}&to=${to}`)
          .expect(200);
        const [a, b] = await Promise.all([from, to].map((s) => t.checkpoints.bySize(s)));
        expect(
          verifyConsistency(
            from,
            to,
            (res.body.proof as string[]).map((p) => Buffer.from(p, 'hex')),
            parseCheckpoint(openNote(a!.note, keys())).rootHash,
            parseCheckpoint(openNote(b!.note, keys())).rootHash,
          ),
        ).toBe(true);
      }
      for (const who of accounts) {
        const verdict = verifyExport(await exportJson(who), keys());
        expect(verdict).toMatchObject({ ok: true, records: 33 });
      }
    } finally {
      // Not close(): the two apps share one database, which the first drops at the end.
      await second.disconnect();
    }
  }, 180_000); // many sealed writes on a loaded 2-core machine; not a timing check
});

describe('checkpoints on a timer', () => {
  it('when records arrive while the timer runs, then a checkpoint covering them is signed', async () => {
    const who = await account();
    const [record] = await seal(who, 2);
    const leaf = (await t.mongo.db.collection('evidence_leaves').findOne({ logId: record!.id }))!;
    const stop = t.checkpoints.run(100, pino({ level: 'silent' }));
    try {
      while (((await t.checkpoints.latest())?._id ?? 0) <= Number(leaf._id)) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await stop();
    }
    const latest = (await t.checkpoints.latest())!;
    expect(parseCheckpoint(openNote(latest.note, keys())).size).toBe(latest._id);
  });
});

describe('public log routes', () => {
  it('when the checkpoint and key are fetched, then the note opens with the published vkey', async () => {
    const who = await account();
    const [record] = await seal(who, 1);
    await t.checkpoints.issue();
    const key = await request(t.app).get('/api/log/public-key').expect(200);
    expect(key.body.vkey).toBe(verifierKey(t.signer));
    const note = await request(t.app).get('/api/log/checkpoint').expect(200);
    expect(note.type).toBe('text/plain');
    const checkpoint = parseCheckpoint(openNote(note.text, keys()));
    expect(checkpoint.origin).toBe(t.signer.name);
    const check = await request(t.app).get(`/api/verify/${record!.contentHash}`).expect(200);
    expect(
      verifyInclusion(
        check.body.leaf_index,
        checkpoint.size,
        recordLeafHash(record!.contentHash!),
        (check.body.inclusion.proof as string[]).map((p) => Buffer.from(p, 'hex')),
        checkpoint.rootHash,
      ),
    ).toBe(true);
    const bySize = await request(t.app).get(`/api/log/checkpoints/${checkpoint.size}`).expect(200);
    expect(bySize.body.note).toBe(note.text);
  });

  it('when a record is newer than the latest checkpoint, then the public check says so with a null inclusion', async () => {
    const who = await account();
    await t.checkpoints.issue();
    const [record] = await seal(who, 1);
    const check = await request(t.app).get(`/api/verify/${record!.contentHash}`).expect(200);
    expect(check.body).toMatchObject({
      exists: true,
      leaf_index: expect.any(Number),
      inclusion: null,
    });
  });

  it('when consistency is asked with bad sizes, then 422 naming them, or 404 for an unsigned size', async () => {
    const bad = await request(t.app).get('/api/log/consistency?from=0&to=x');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^query\.(from|to): /);
    const reversed = await request(t.app).get('/api/log/consistency?from=5&to=2');
    expect(reversed.status).toBe(422);
    const unsigned = await request(t.app).get('/api/log/consistency?from=1&to=999999999');
    expect(unsigned.status).toBe(404);
    expect((await request(t.app).get('/api/log/checkpoints/0')).status).toBe(422);
  });
});

describe('the offline verifier', () => {
  let dir: string;
  let vkeyFile: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'verify-evidence-'));
    vkeyFile = join(dir, 'log.vkey');
    await writeFile(vkeyFile, verifierKey(t.signer));
  });

  /** The verifier as an outsider runs it, on a file. */
  const verifyCli = (doc: unknown, ...extra: string[]) =>
    verifyEvidenceCli({ dir, publicKeyFile: vkeyFile }, doc, ...extra);

  it('when the export is untouched, then the command exits 0 with a one-line VERIFIED', async () => {
    const who = await account();
    await seal(who, 4);
    const result = await verifyCli(await exportJson(who));
    expect(result).toEqual({
      code: 0,
      out: expect.stringMatching(/^VERIFIED: 5 records \(seq 1–5\)/),
    });
    expect(result.out.split('\n')).toHaveLength(1);
  });

  it('when a record was edited, deleted or reordered in the export, then FAILED names the record', async () => {
    const who = await account();
    await seal(who, 4);
    const good = await exportJson(who);
    const copy = () => structuredClone(good);

    const edited = copy();
    edited.records[2]!.data.note = 'rewritten';
    expect(await verifyCli(edited)).toEqual({
      code: 1,
      out: `FAILED: record seq 3 (${good.records[2]!.log_id}): its content hash does not match its fields (edited)`,
    });

    const deleted = copy();
    deleted.records.splice(2, 1);
    expect(verifyExport(deleted, keys()).line).toBe(
      'FAILED: record seq 3: records 3–3 are missing and no sealed removal explains it',
    );

    const reordered = copy();
    [reordered.records[1], reordered.records[2]] = [reordered.records[2]!, reordered.records[1]!];
    expect(verifyExport(reordered, keys()).failed).toMatchObject({
      seq: 2,
      reason: expect.stringMatching(/link/),
    });

    const truncated = copy();
    truncated.records.pop();
    expect(verifyExport(truncated, keys()).line).toMatch(/records 5–5 are missing/);

    const forgedProof = copy();
    forgedProof.records[0]!.inclusion_proof = forgedProof.records[1]!.inclusion_proof;
    expect(verifyExport(forgedProof, keys()).line).toMatch(/seq 1 .*inclusion proof fails/);

    // The record placed at another leaf, with that leaf's proof: the promise names its own.
    const moved = copy();
    moved.records[0]!.leaf_index = good.records[1]!.leaf_index;
    moved.records[0]!.inclusion_proof = good.records[1]!.inclusion_proof;
    expect(verifyExport(moved, keys()).line).toBe(
      `FAILED: record seq 1 (${good.records[0]!.log_id}): the log promised it leaf ${good.records[0]!.leaf_index}, it is at leaf ${good.records[1]!.leaf_index}`,
    );

    const swappedPromise = copy();
    swappedPromise.records[3]!.promise = good.records[2]!.promise;
    expect(verifyExport(swappedPromise, keys()).line).toMatch(
      /seq 4 .*its inclusion promise is for another record$/,
    );
  });

  it('when checked with another key, then the checkpoint is refused', async () => {
    const who = await account();
    const other = generateSigner(t.signer.name).signer;
    expect(verifyExport(await exportJson(who), [other]).line).toBe(
      'FAILED: the checkpoint: no signature by a trusted key',
    );
  });

  it('when the operator rewrote the whole chain with fresh hashes and re-signed, then only an earlier checkpoint catches it', async () => {
    const who = await account();
    await seal(who, 4);
    await exportJson(who);
    const earlier = (await request(t.app).get('/api/log/checkpoint').expect(200)).text;

    // The operator, who holds the database and the key: new content, every hash recomputed,
    // the chain relinked, the Merkle log rebuilt from its leaves and a new checkpoint signed.
    const db = t.mongo.db;
    const rows = await db
      .collection('evidence')
      .find({ accountId: who.userId })
      .sort({ seq: 1 })
      .toArray();
    let prevHash: string | null = null;
    for (const row of rows) {
      const data = row.kind === 'test.note' ? { ...row.data, note: 'innocent' } : row.data;
      const hash = contentHash({
        logId: String(row._id),
        accountId: who.userId,
        seq: row.seq,
        kind: row.kind,
        sealedAt: row.sealedAt,
        prevHash,
        data,
      });
      await db
        .collection('evidence')
        .updateOne({ _id: row._id }, { $set: { data, prevHash, contentHash: hash } });
      await db
        .collection('evidence_leaves')
        .updateOne({ logId: row._id }, { $set: { contentHash: hash } });
      prevHash = hash;
    }
    await db
      .collection('evidence_heads')
      .updateOne({ _id: who.userId as never }, { $set: { hash: prevHash! } });
    await db.collection('evidence_nodes').deleteMany({});
    await db.collection('evidence_checkpoints').deleteMany({});
    // and restarts the service: a running writer would still chain to the head it last wrote.
    await new EvidenceStore(db, () => new Date()).append(who.userId, {
      kind: 'test.note',
      data: {},
    });

    const rewritten = await exportJson(who);
    expect(verifyExport(rewritten, keys()).ok).toBe(true); // alone, a re-signed rewrite passes
    const size = rewritten.cut.checkpoint!.size;
    const from = parseCheckpoint(openNote(earlier, keys())).size;
    const proof = await request(t.app)
      .get(`/api/log/consistency?from=${from}&to=${size}`)
      .expect(200);
    await writeFile(join(dir, 'earlier.txt'), earlier);
    await writeFile(join(dir, 'proof.json'), JSON.stringify(proof.body));
    const result = await verifyCli(
      rewritten,
      '--earlier-checkpoint',
      join(dir, 'earlier.txt'),
      '--consistency',
      join(dir, 'proof.json'),
    );
    expect(result.code).toBe(1);
    expect(result.out).toMatch(
      /^FAILED: the log of size \d+ does not extend the earlier checkpoint of size \d+: it was rewritten$/,
    );
  });

  it('when the input is not an export, then exit 2 and nothing verified', async () => {
    const result = await verifyCli({ hello: 'world' });
    expect(result.code).toBe(2);
    expect(result.out).toMatch(/^not an evidence export/);
  });
});

describe('the legal PDF', () => {
  it('when exported during appends, then header and body agree, every page is numbered, and it renders', async () => {
    const who = await account('pro');
    await seal(who, 40);
    const res = await whileAppending(who, () =>
      request(t.app)
        .get(`/audit/export/${who.userId}?format=pdf`)
        .set('X-API-Key', who.key)
        .buffer(true)
        .parse((response, done) => {
          const chunks: Buffer[] = [];
          response.on('data', (c: Buffer) => chunks.push(c));
          response.on('end', () => done(null, Buffer.concat(chunks)));
        }),
    );
    expect(res.status).toBe(200);
    const dir = process.env.EVIDENCE_PDF_DIR ?? (await mkdtemp(join(tmpdir(), 'evidence-pdf-')));
    const pdf = join(dir, 'evidence.pdf');
    await writeFile(pdf, res.body as Buffer);
    await run('pdftoppm', ['-png', '-r', '80', pdf, join(dir, 'page')]);
    const { stdout: text } = await run('pdftotext', ['-layout', pdf, '-']);
    const pages = text.split('\f').filter((p) => p.trim());
    const cutSeq = Number(/Cut at: sequence (\d+)/.exec(text)![1]);
    const listed = [...text.matchAll(/^\s*#(\d+) /gm)].map((m) => Number(m[1]));
    expect(listed).toEqual(Array.from({ length: cutSeq }, (_, i) => i + 1));
    pages.forEach((page, i) => expect(page).toContain(`Page ${i + 1} of ${pages.length}`));
    expect(text).toContain(`Issuer: Evidence log ${t.signer.name}`);
    expect(text).toMatch(/VERIFIED: \d+ records/);
    expect(text).toContain(verifierKey(t.signer));
    expect(text).toContain('npm run verify-evidence');
    expect(text).toMatch(/note: n7; i: 7/);
    const first = (await readdir(dir)).filter((f) => f.endsWith('.png')).sort()[0]!;
    const png = await readFile(join(dir, first));
    expect(png.subarray(1, 4).toString()).toBe('PNG');
  });
});
