import request from 'supertest';
import { evidenceExportView } from '../../src/evidence/export/evidence-export';
import {
  chainReportView,
  hashCheckView,
  recordVerificationView,
} from '../../src/evidence/evidence.service';
import { evidencePageView } from '../../src/evidence/records.routes';
import { EvidenceStore } from '../../src/evidence/evidence.store';
import type { Inclusion } from '../../src/evidence/log/evidence-log';
import { recordLeafHash } from '../../src/evidence/log/log-tree';
import { verifyInclusion } from '../../src/evidence/log/merkle';
import { openNote, parseCheckpoint } from '../../src/evidence/log/signed-note';
import { createKey, signUpAndLogIn, type SignedIn } from '../support/accounts';
import { createTestApp, type TestApp } from '../support/test-app';

let t: TestApp;
let store: EvidenceStore;

beforeAll(async () => {
  t = await createTestApp();
  store = new EvidenceStore(t.mongo.db, () => new Date());
});
afterAll(() => t.close());

interface Account extends SignedIn {
  key: string;
}

async function account(): Promise<Account> {
  const who = await signUpAndLogIn(t.app);
  const { key } = await createKey(t.app, who.token, { scopes: ['audit:*'] });
  return { ...who, key };
}

/** Seals `n` records for the account (after the key-creation record already there). */
async function seal(who: Account, n: number) {
  const records = [];
  for (let i = 0; i < n; i++) {
    records.push(await store.append(who.userId, { kind: 'test.note', data: { note: `n${i}`, i } }));
  }
  return records;
}

const evidence = () => t.mongo.db.collection('evidence');

/** Checks an inclusion answer the way an outsider would: the note against the test's own key. */
function expectIncluded(contentHash: string, inclusion: Inclusion) {
  const checkpoint = parseCheckpoint(openNote(inclusion.checkpoint, [t.signer]));
  expect(checkpoint.size).toBe(inclusion.tree_size);
  const proof = inclusion.proof.map((p) => Buffer.from(p, 'hex'));
  expect(
    verifyInclusion(
      inclusion.leaf_index,
      checkpoint.size,
      recordLeafHash(contentHash),
      proof,
      checkpoint.rootHash,
    ),
  ).toBe(true);
}
const verify = (who: Account, logId: string) =>
  request(t.app).post(`/audit/verify/${logId}`).set('X-API-Key', who.key);
const chain = (who: Account) =>
  request(t.app).get(`/audit/chain/${who.userId}`).set('X-API-Key', who.key);

describe('POST /audit/verify/<log_id>', () => {
  it('when a sealed record is verified, then it is verified, untampered, and linked', async () => {
    const who = await account();
    const [record] = await seal(who, 1);
    const res = await verify(who, record!.id);
    expect(res.status).toBe(200);
    recordVerificationView.parse(res.body);
    expect(res.body).toEqual({
      log_id: record!.id,
      seq: 2,
      kind: 'test.note',
      verified: true,
      tampered: false,
      match: true,
      stored_hash: record!.contentHash,
      recomputed_hash: record!.contentHash,
      sealed: true,
      sealed_at: record!.sealedAt.toISOString(),
      algorithm: 'sha256-jcs',
      link: { holds: true, prev_hash: record!.prevHash, predecessor_hash: record!.prevHash },
      leaf_index: expect.any(Number),
      promise: expect.objectContaining({
        leaf_index: res.body.leaf_index,
        timestamp: record!.sealedAt.toISOString(),
      }),
      inclusion: expect.objectContaining({ leaf_index: res.body.leaf_index }),
    });
    expectIncluded(record!.contentHash!, res.body.inclusion);
  });

  it('when one field was changed in the database, then tampered, no match, both hashes shown', async () => {
    const who = await account();
    const [record] = await seal(who, 1);
    await evidence().updateOne(
      { _id: record!.id as never },
      { $set: { 'data.note': 'rewritten' } },
    );
    const res = await verify(who, record!.id);
    expect(recordVerificationView.parse(res.body)).toMatchObject({
      verified: false,
      tampered: true,
      match: false,
      sealed: true,
    });
    expect(res.body.stored_hash).toBe(record!.contentHash);
    expect(res.body.recomputed_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(res.body.recomputed_hash).not.toBe(res.body.stored_hash);
  });

  it('when the predecessor was replaced, then the link does not hold', async () => {
    const who = await account();
    const [first, second] = await seal(who, 2);
    await evidence().updateOne(
      { _id: first!.id as never },
      { $set: { contentHash: 'f'.repeat(64) } },
    );
    const res = await verify(who, second!.id);
    expect(res.body).toMatchObject({ match: true, verified: false, link: { holds: false } });
  });

  it("when the record is another account's, then 403; when unknown, then 404", async () => {
    const owner = await account();
    const other = await account();
    const [record] = await seal(owner, 1);
    expect((await verify(other, record!.id)).status).toBe(403);
    expect((await verify(owner, 'evd_doesnotexist')).status).toBe(404);
  });

  it('when the key lacks audit:write, then 403 names it', async () => {
    const who = await account();
    const readOnly = (await createKey(t.app, who.token, { scopes: ['audit:read'] })).key;
    const [record] = await seal(who, 1);
    const res = await request(t.app).post(`/audit/verify/${record!.id}`).set('X-API-Key', readOnly);
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/audit:write$/);
  });
});

describe('records from before sealing', () => {
  it('when a record has no stored hash, then it says sealed: false and is not verified', async () => {
    const who = await account();
    const [record] = await seal(who, 1);
    await evidence().updateOne(
      { _id: record!.id as never },
      { $unset: { contentHash: '', algorithm: '' } },
    );
    const res = await verify(who, record!.id);
    expect(res.body).toMatchObject({
      sealed: false,
      verified: false,
      tampered: false,
      match: false,
      stored_hash: null,
      algorithm: null,
    });
  });
});

describe('concurrent sealing', () => {
  it('when two replicas append to one account at once, then sequences have no gap or repeat', async () => {
    const who = await account();
    const replicas = [store, new EvidenceStore(t.mongo.db, () => new Date())];
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        replicas[i % 2]!.append(who.userId, { kind: 'test.race', data: { i } }),
      ),
    );
    const seqs = (await evidence().find({ accountId: who.userId }).sort({ seq: 1 }).toArray()).map(
      (r) => Number(r.seq),
    );
    expect(seqs).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
    expect((await chain(who)).body).toMatchObject({ intact: true, records_checked: 41 });
  });
});

describe('chain head', () => {
  it('when the recorded head lags (a crash before it moved), then appends still continue the chain', async () => {
    const who = await account();
    await seal(who, 2);
    await t.mongo.db
      .collection('evidence_heads')
      .updateOne({ _id: who.userId as never }, { $set: { seq: 1 } });
    const [next] = await seal(who, 1);
    expect(next!.seq).toBe(4);
    expect((await chain(who)).body).toMatchObject({
      intact: true,
      records_checked: 4,
      head: { seq: 4 },
    });
    expect((await verify(who, next!.id)).body).toMatchObject({
      verified: true,
      link: { holds: true },
    });
  });

  it('when a whole batch is sent again (a retry), then nothing is stored twice', async () => {
    const who = await account();
    const inputs = [1, 2, 3].map((i) => ({
      kind: 'test.retry',
      data: { i },
      logId: `evd_retry_${who.userId}_${i}`,
    }));
    const first = await store.appendMany(who.userId, inputs);
    const again = await store.appendMany(who.userId, inputs);
    expect(again.map((r) => r.seq)).toEqual(first.map((r) => r.seq));
    expect(await evidence().countDocuments({ accountId: who.userId })).toBe(4);
  });
});

describe('GET /audit/chain/<user_id>', () => {
  it('when nothing was touched, then the chain is intact up to its head', async () => {
    const who = await account();
    const records = await seal(who, 3);
    const res = await chain(who);
    chainReportView.parse(res.body);
    expect(res.body).toEqual({
      intact: true,
      records_checked: 4,
      head: { seq: 4, hash: records[2]!.contentHash },
      first_edited: null,
      first_broken_link: null,
      missing_seqs: [],
      removed_seqs: [],
    });
  });

  it('when a record was deleted in the middle or at the end, then the gaps are reported', async () => {
    const who = await account();
    const records = await seal(who, 4);
    await evidence().deleteOne({ _id: records[1]!.id as never });
    await evidence().deleteOne({ _id: records[3]!.id as never });
    const res = await chain(who);
    expect(chainReportView.parse(res.body)).toMatchObject({
      intact: false,
      records_checked: 3,
      first_edited: null,
      missing_seqs: [
        { from: 3, to: 3 },
        { from: 5, to: 5 },
      ],
    });
  });

  it('when a record was edited, or edited and re-hashed, then the first edit or broken link shows', async () => {
    const who = await account();
    const records = await seal(who, 3);
    await evidence().updateOne({ _id: records[2]!.id as never }, { $set: { 'data.i': 99 } });
    await evidence().updateOne(
      { _id: records[0]!.id as never },
      { $set: { 'data.i': 42, contentHash: 'e'.repeat(64) } },
    );
    const res = await chain(who);
    expect(res.body.intact).toBe(false);
    expect(res.body.first_edited).toEqual({ log_id: records[0]!.id, seq: 2 });
    expect(res.body.first_broken_link).toMatchObject({ log_id: records[1]!.id, seq: 3 });
  });

  it("when another account's chain is asked for, then 403", async () => {
    const who = await account();
    const other = await account();
    expect(
      (await request(t.app).get(`/audit/chain/${other.userId}`).set('X-API-Key', who.key)).status,
    ).toBe(403);
  });

  it('when a console session asks, then the same report comes from /api/audit/chain', async () => {
    const who = await account();
    await seal(who, 1);
    const res = await request(t.app)
      .get('/api/audit/chain')
      .set('Authorization', `Bearer ${who.token}`);
    expect(res.body).toMatchObject({ intact: true, records_checked: 2 });
  });
});

describe('GET /api/verify/<hash>', () => {
  it('when the hash is of an intact sealed record, then yes, and nothing about its content or owner', async () => {
    const who = await account();
    const [record] = await seal(who, 1);
    await t.checkpoints.issue();
    const res = await request(t.app).get(`/api/verify/${record!.contentHash!.toUpperCase()}`);
    expect(res.status).toBe(200);
    hashCheckView.parse(res.body);
    expect(res.body).toEqual({
      content_hash: record!.contentHash,
      exists: true,
      intact: true,
      sealed_at: record!.sealedAt.toISOString(),
      algorithm: 'sha256-jcs',
      leaf_index: expect.any(Number),
      // Nothing the check does not already answer: index, leaf hash, sealing time, the log's key.
      promise: expect.objectContaining({
        leaf_index: res.body.leaf_index,
        timestamp: record!.sealedAt.toISOString(),
      }),
      inclusion: expect.objectContaining({ leaf_index: res.body.leaf_index }),
    });
    expectIncluded(record!.contentHash!, res.body.inclusion);
    expect(res.text).not.toContain(who.userId);
    expect(res.text).not.toContain(record!.id);
  });

  it('when the record behind the hash was edited, then it exists but is not intact', async () => {
    const who = await account();
    const [record] = await seal(who, 1);
    await evidence().updateOne({ _id: record!.id as never }, { $set: { kind: 'test.other' } });
    const res = await request(t.app).get(`/api/verify/${record!.contentHash}`);
    expect(res.body).toMatchObject({ exists: true, intact: false });
  });

  it('when the hash is unknown, then 404; when malformed, then 422', async () => {
    expect((await request(t.app).get(`/api/verify/${'0'.repeat(64)}`)).status).toBe(404);
    const bad = await request(t.app).get('/api/verify/not-a-hash');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^hash: /);
  });

  it('when one client probes too fast, then 429 with Retry-After', async () => {
    const probing = await createTestApp();
    try {
      let res: request.Response | undefined;
      for (let i = 0; i < 61; i++)
        res = await request(probing.app).get(`/api/verify/${'1'.repeat(64)}`);
      expect(res!.status).toBe(429);
      expect(res!.headers['retry-after']).toBe('60');
      expect(res!.body.detail).toMatchObject({ error: 'rate_limited', retry_after_seconds: 60 });
    } finally {
      await probing.close();
    }
  });
});

describe('GET /audit/export/<user_id>', () => {
  it('when exported as JSON, then every record comes with its hash and link, and a summary', async () => {
    const who = await account();
    const records = await seal(who, 3);
    const res = await request(t.app).get(`/audit/export/${who.userId}`).set('X-API-Key', who.key);
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/json');
    evidenceExportView.parse(res.body);
    expect(res.body.account_id).toBe(who.userId);
    expect(res.body.records.map((r: { seq: number }) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(res.body.records[3]).toEqual({
      log_id: records[2]!.id,
      seq: 4,
      kind: 'test.note',
      sealed_at: records[2]!.sealedAt.toISOString(),
      prev_hash: records[1]!.contentHash,
      content_hash: records[2]!.contentHash,
      algorithm: 'sha256-jcs',
      data: { note: 'n2', i: 2 },
      personal: [],
      leaf_index: expect.any(Number),
      promise: expect.stringMatching(/^tripwire-evidence\/inclusion-promise\/v1\n/),
      inclusion_proof: expect.any(Array),
    });
    expect(res.body.cut.head).toEqual({ seq: 4, content_hash: records[2]!.contentHash });
    expect(res.body.summary).toEqual({
      count: 4,
      first_seq: 1,
      last_seq: 4,
      head_hash: records[2]!.contentHash,
    });
  });

  it('when the log is longer than one chunk, then the document is still whole and in order', async () => {
    const who = await account();
    await store.appendMany(
      who.userId,
      Array.from({ length: 450 }, (_, i) => ({ kind: 'test.bulk', data: { i } })),
    );
    const res = await request(t.app).get(`/audit/export/${who.userId}`).set('X-API-Key', who.key);
    expect(res.body.summary).toMatchObject({ count: 451, first_seq: 1, last_seq: 451 });
    expect(res.body.records.every((r: { seq: number }, i: number) => r.seq === i + 1)).toBe(true);
  });

  it('when a free account asks for the PDF, then 402 with the structured plan-limit body', async () => {
    const who = await account();
    for (const req of [
      request(t.app).get(`/audit/export/${who.userId}?format=pdf`),
      request(t.app).get(`/audit/export/${who.userId}`).set('Accept', 'application/pdf'),
    ]) {
      const res = await req.set('X-API-Key', who.key);
      expect(res.status).toBe(402);
      expect(res.body.detail).toEqual({
        error: 'plan_limit_exceeded',
        metric: 'legal_pdf_export',
        plan: 'free',
        plan_display_name: 'Free',
        limit: 0,
        message: expect.stringContaining('Pro and Enterprise'),
        upgrade_url: '/console/#/account',
        used: 0,
        resets_at: expect.stringMatching(/^\d{4}-\d{2}-01$/),
      });
    }
  });

  it('when a pro account asks for the PDF, then a PDF document comes back', async () => {
    const who = await account();
    await t.mongo.db
      .collection('users')
      .updateOne({ _id: who.userId as never }, { $set: { plan: 'pro' } });
    await seal(who, 2);
    const res = await request(t.app)
      .get(`/audit/export/${who.userId}?format=pdf`)
      .set('X-API-Key', who.key)
      .buffer(true)
      .parse((response, done) => {
        const chunks: Buffer[] = [];
        response.on('data', (c: Buffer) => chunks.push(c));
        response.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/pdf');
    const pdf = res.body as Buffer;
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdf.subarray(-6).toString()).toMatch(/%%EOF/);
  });

  it("when another account's log is asked for, then 403; a bad format, then 422", async () => {
    const who = await account();
    const other = await account();
    expect(
      (await request(t.app).get(`/audit/export/${other.userId}`).set('X-API-Key', who.key)).status,
    ).toBe(403);
    const bad = await request(t.app)
      .get(`/audit/export/${who.userId}?format=xml`)
      .set('X-API-Key', who.key);
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/^query\.format: /);
  });
});

describe('console evidence routes under /api/audit (session)', () => {
  const asSession = (who: Account) => ({ Authorization: `Bearer ${who.token}` });

  it('when the log is listed, then records come newest first, page by page, with their hashes', async () => {
    const who = await account();
    const sealed = await seal(who, 3);
    const first = await request(t.app).get('/api/audit/records?limit=2').set(asSession(who));
    expect(first.status).toBe(200);
    expect(first.body.records.map((r: { seq: number }) => r.seq)).toEqual([4, 3]);
    expect(first.body.records[0]).toMatchObject({
      log_id: sealed[2]!.id,
      kind: 'test.note',
      content_hash: sealed[2]!.contentHash,
      prev_hash: sealed[1]!.contentHash,
      data: { note: 'n2', i: 2 },
    });
    expect(first.body.next_before).toBe(3);
    evidencePageView.parse(first.body);
    const rest = await request(t.app)
      .get(`/api/audit/records?limit=2&cursor=${first.body.next_cursor}`)
      .set(asSession(who));
    expect(rest.body.records.map((r: { seq: number }) => r.seq)).toEqual([2, 1]);
    expect(rest.body.next_cursor).toBeNull();
    expect(rest.body.next_before).toBeNull();
    const deprecated = await request(t.app)
      .get(`/api/audit/records?limit=2&before=${first.body.next_before}`)
      .set(asSession(who));
    expect(deprecated.body).toEqual(rest.body);
  });

  it('when a record is verified from the console, then the same report as /audit/verify', async () => {
    const who = await account();
    const [record] = await seal(who, 1);
    const res = await request(t.app)
      .post(`/api/audit/records/${record!.id}/verify`)
      .set(asSession(who));
    expect(res.status).toBe(200);
    expect(res.body).toEqual((await verify(who, record!.id)).body);
    expect(res.body).toMatchObject({ verified: true, tampered: false });
  });

  it("when another account's record is verified, then 403; an unknown one, 404", async () => {
    const who = await account();
    const other = await account();
    const [theirs] = await seal(other, 1);
    const verifyAs = (logId: string) =>
      request(t.app).post(`/api/audit/records/${logId}/verify`).set(asSession(who));
    expect((await verifyAs(theirs!.id)).status).toBe(403);
    expect((await verifyAs('no-such-record')).status).toBe(404);
  });

  it('when the log is exported from the console, then the JSON export; the PDF on free is 402', async () => {
    const who = await account();
    await seal(who, 2);
    const json = await request(t.app).get('/api/audit/export').set(asSession(who));
    expect(json.status).toBe(200);
    expect(json.body.summary).toMatchObject({ count: 3, first_seq: 1, last_seq: 3 });
    const pdf = await request(t.app).get('/api/audit/export?format=pdf').set(asSession(who));
    expect(pdf.status).toBe(402);
    expect(pdf.body.detail).toMatchObject({ metric: 'legal_pdf_export', plan: 'free' });
  });

  it('when an API key is used on the console routes, even with *, then 401 and nothing is listed', async () => {
    const who = await account();
    const { key } = await createKey(t.app, who.token, { scopes: ['*'] });
    const res = await request(t.app).get('/api/audit/records').set('X-API-Key', key);
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/API keys are not accepted/);
  });
});

describe('evidence protection', () => {
  it('when an API key, even with *, tries to delete evidence, then 403 and the record stays', async () => {
    const who = await account();
    const all = (await createKey(t.app, who.token, { scopes: ['*'] })).key;
    const [record] = await seal(who, 1);
    const res = await request(t.app).delete(`/audit/records/${record!.id}`).set('X-API-Key', all);
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/no API key can delete evidence/);
    expect(await evidence().countDocuments({ _id: record!.id as never })).toBe(1);
  });
});
