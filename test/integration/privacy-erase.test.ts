import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { BSON } from 'mongodb';
import request from 'supertest';
import { UsersRepository } from '../../src/accounts/users.repository';
import { DataKeys } from '../../src/evidence/data-keys';
import { EvidenceRepository } from '../../src/evidence/evidence.repository';
import { exportEvidence } from '../../src/evidence/export/evidence-export';
import { EvidenceLog } from '../../src/evidence/log/evidence-log';
import { generateSigner, verifierKey } from '../../src/evidence/log/signed-note';
import { contentHash, SEAL_ALGORITHM } from '../../src/evidence/seal';
import { ERASE_CONFIRMATION } from '../../src/privacy/privacy.routes';
import { createKey, PASSWORD, signUpAndLogIn, type SignedIn } from '../support/accounts';
import { verifyEvidenceCli } from '../support/verify-evidence-cli';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';
import { startApiProcess } from '../support/api-process';
import { ScheduleNotFoundError } from '@temporalio/client';
import { weeklyScheduleId } from '../../src/weekly/weekly-schedules';

// Each case runs the offline verifier as a child process (tsx) and waits for the hit journal to
// drain, seconds each, many more on a loaded machine.
jest.setTimeout(240_000);
let t: TestApp;
/** The log's key, also handed to the API processes the kill test starts. */
const logKey = generateSigner('tripwire.test/evidence');
let dir: string;
let vkeyFile: string;
const as = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });
const ERASE = { password: PASSWORD, confirm: ERASE_CONFIRMATION };

beforeAll(async () => {
  // One proxy hop: the canary hit's source is the address the test names, the user's own.
  t = await createTestApp({ config: testConfig({ TRUST_PROXY: '1' }), signer: logKey.signer });
  // As the API runs it: the journal's passes seal and delete settled segments.
  t.tripwires.startReplay();
  dir = await mkdtemp(join(tmpdir(), 'privacy-erase-'));
  vkeyFile = join(dir, 'log.vkey');
  await writeFile(vkeyFile, verifierKey(t.signer));
});
afterAll(() => t.close());

/** Everything personal the test gives an account, each value distinct enough to find anywhere. */
function personalValues(n: number) {
  return {
    ip: `198.51.100.${70 + n}`,
    userAgent: `ErasureProbe/${n}.1 (alice-example-${n})`,
    legacyIp: `203.0.113.${70 + n}`,
    channelName: `Alice Example pager ${n}`,
    channelUrl: `https://93.184.216.34/alice-example-hook-${n}`,
    channelSecret: `alice-example-webhook-secret-${n}`,
    memo: `Alice Example laptop ${n}`,
  };
}

/**
 * A record sealed the way the log sealed hits before personal values became digests: its
 * address in the clear, inside the hash. Appended at the chain's head, as the store would.
 */
async function sealLegacyHit(accountId: string, ip: string) {
  const heads = t.mongo.db.collection<{ _id: string; seq: number; hash: string; logId: string }>(
    'evidence_heads',
  );
  const head = await heads.findOne({ _id: accountId });
  const fields = {
    logId: `evd_legacy_${accountId}`,
    accountId,
    seq: (head?.seq ?? 0) + 1,
    kind: 'threat.hit',
    sealedAt: new Date(),
    prevHash: head?.hash ?? null,
    data: { canary_id: 'cnr_legacy', via: 'http', ip, user_agent: 'curl/8.0' },
  };
  const hash = contentHash(fields);
  const { logId, ...rest } = fields;
  await t.mongo.db.collection('evidence').insertOne({
    _id: logId as never,
    ...rest,
    prevLogId: head?.logId ?? null,
    contentHash: hash,
    algorithm: SEAL_ALGORITHM,
  });
  await heads.updateOne(
    { _id: accountId },
    { $set: { seq: fields.seq, hash, logId } },
    { upsert: true },
  );
}

/** An account with data of every kind: a legacy record, a hit, a channel, keys, and it is an
 * operator who acted on `other` (so its email is sealed in another account's log too). */
async function accountWithData(n: number, other: SignedIn) {
  const who = await signUpAndLogIn(t.app);
  const values = personalValues(n);
  await sealLegacyHit(who.userId, values.legacyIp);
  await t.mongo.db
    .collection('users')
    .updateOne({ _id: who.userId as never }, { $set: { role: 'operator' } });
  const adminKey = await createKey(t.app, who.token, { scopes: ['admin:*'] });
  await request(t.app)
    .patch(`/api/admin/accounts/${other.userId}`)
    .set('X-API-Key', adminKey.key)
    .send({ plan: 'pro' })
    .expect(200);
  const canary = await request(t.app)
    .post('/api/canaries')
    .set(as(who))
    .send({ kind: 'url', memo: values.memo })
    .expect(201);
  await request(t.app)
    .get(new URL(canary.body.value as string).pathname)
    .set('X-Forwarded-For', values.ip)
    .set('User-Agent', values.userAgent);
  await t.tripwires.flush();
  await request(t.app)
    .post('/api/alert-channels')
    .set(as(who))
    .send({
      kind: 'webhook',
      name: values.channelName,
      url: values.channelUrl,
      secret: values.channelSecret,
    })
    .expect(201);
  const key = await createKey(t.app, who.token, { scopes: ['privacy:read', 'privacy:write'] });
  return { who, values, key: key.key, secrets: [values.channelSecret, key.key, adminKey.key] };
}

interface ExportDoc {
  cut: { checkpoint: { size: number; note: string } | null };
  records: {
    seq: number;
    kind: string;
    content_hash: string;
    personal: { path: string; value: unknown }[];
  }[];
}

/** The verifier as an outsider runs it, on a file. */
const verifyCli = (doc: unknown, ...extra: string[]) =>
  verifyEvidenceCli({ dir, publicKeyFile: vkeyFile }, doc, ...extra);

/** The sealed log of any account, erased or not, as the operator's database holds it. */
async function exportOf(accountId: string): Promise<ExportDoc> {
  const file = await exportEvidence(
    {
      evidence: new EvidenceRepository(t.mongo.db),
      log: new EvidenceLog(t.mongo.db, t.signer, () => new Date()),
      users: new UsersRepository(t.mongo.db),
      plans: t.config.plans,
      now: () => new Date(),
    },
    accountId,
    'json',
  );
  return JSON.parse(await text(file.body)) as ExportDoc;
}

/** Every raw document of every collection, as text. */
async function everythingStored(): Promise<string> {
  const parts: string[] = [];
  for (const { name } of await t.mongo.db.listCollections().toArray()) {
    for (const doc of await t.mongo.db.collection(name).find({}).toArray()) {
      parts.push(`${name} ${BSON.EJSON.stringify(doc)}`);
    }
  }
  return parts.join('\n');
}

/** The hit journal's files on local disk, as text. */
async function journalled(): Promise<string> {
  const journal = t.config.TRIPWIRE_JOURNAL_DIR;
  const parts: string[] = [];
  for (const entry of await readdir(journal, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) parts.push(await readFile(join(entry.parentPath, entry.name), 'latin1'));
  }
  return parts.join('\n');
}

/**
 * The journal keeps a hit on disk only until its segment rotates (5 s) and is settled: waits
 * for that, and fails if any of the values outlives it.
 */
async function journalForgets(values: string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  let held = values;
  while (held.length && Date.now() < deadline) {
    const text = await journalled();
    held = values.filter((value) => text.includes(value));
    if (held.length) await new Promise((resolve) => setTimeout(resolve, 500));
  }
  expect(held).toEqual([]);
}

describe('POST /api/privacy/erase', () => {
  it('refuses an API key, a wrong password and a missing confirmation, and changes nothing', async () => {
    const other = await signUpAndLogIn(t.app);
    const { who, key } = await accountWithData(1, other);
    const erase = () => request(t.app).post('/api/privacy/erase');

    const byKey = await erase().set('X-API-Key', key).send(ERASE);
    expect(byKey.status).toBe(403);
    expect(byKey.body.detail).toMatch(/needs a signed-in console session.*no API key can erase/);
    const narrow = await createKey(t.app, who.token, { scopes: ['privacy:read'] });
    const unscoped = await erase().set('X-API-Key', narrow.key).send(ERASE);
    expect(unscoped.status).toBe(403);
    expect(unscoped.body).toEqual({
      detail: 'The API key does not have the required scope: privacy:write',
    });
    expect((await erase().send(ERASE)).status).toBe(401);

    const wrong = await erase()
      .set(as(who))
      .send({ ...ERASE, password: 'not the password' });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toEqual({ detail: 'password: does not match the account password' });
    const unconfirmed = await erase().set(as(who)).send({ password: PASSWORD });
    expect(unconfirmed.status).toBe(422);
    expect(unconfirmed.body.detail).toContain('confirm');
    const misconfirmed = await erase()
      .set(as(who))
      .send({ ...ERASE, confirm: 'yes' });
    expect(misconfirmed.status).toBe(422);
    expect(misconfirmed.body.detail).toContain(`"${ERASE_CONFIRMATION}"`);
    const noPassword = await erase().set(as(who)).send({ confirm: ERASE_CONFIRMATION });
    expect(noPassword.status).toBe(422);
    expect(noPassword.body.detail).toContain('password');

    const me = await request(t.app).get('/api/users/me').set(as(who));
    expect(me.status).toBe(200);
    const archive = await request(t.app).get('/api/privacy/export').set(as(who)).expect(200);
    expect(archive.body.canaries).toHaveLength(1);
    expect(
      await t.mongo.db.collection('account_data_keys').findOne({ _id: who.userId as never }),
    ).toMatchObject({ key: expect.anything() });
  });

  it('erases every personal value, while the whole log, its proofs and promises still verify', async () => {
    const other = await signUpAndLogIn(t.app);
    const { who, values, key, secrets } = await accountWithData(2, other);

    // A weekly digest turned on: its settings are exported, and its Schedule goes with the account.
    await request(t.app)
      .put('/api/weekly')
      .set(as(who))
      .send({
        enabled: true,
        weekday: 'friday',
        hour: 8,
        time_zone: 'UTC',
        channels: ['builtin:email'],
      })
      .expect(200);
    const schedule = t.temporal.client.schedule.getHandle(weeklyScheduleId(who.userId));
    await schedule.describe();

    // Before: the owner reads the values, and its export proves them against the sealed digests.
    const archive = await request(t.app).get('/api/privacy/export').set(as(who)).expect(200);
    expect(archive.body.weekly_digest).toEqual([
      expect.objectContaining({ id: who.userId, enabled: true, weekday: 'friday' }),
    ]);
    const hit = archive.body.evidence.find(
      (r: { kind: string; personal: unknown[] }) => r.kind === 'threat.hit' && r.personal.length,
    );
    expect(hit.data.ip).toEqual({ personal_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(hit.personal).toEqual(
      expect.arrayContaining([
        { path: 'ip', salt: expect.any(String), value: values.ip },
        { path: 'user_agent', salt: expect.any(String), value: values.userAgent },
      ]),
    );
    const before = (await request(t.app).get('/api/audit/export').set(as(who)).expect(200))
      .body as ExportDoc;
    expect(await verifyCli(before)).toEqual({
      code: 0,
      out: expect.stringMatching(/^VERIFIED: /),
    });
    const forged = structuredClone(before);
    const forgedHit = forged.records.find((r) => r.personal.length)!;
    forgedHit.personal.find((p) => p.path === 'ip')!.value = '192.0.2.1';
    expect(await verifyCli(forged)).toEqual({
      code: 1,
      out: expect.stringMatching(/FAILED: .*personal value at ip does not match the sealed digest/),
    });
    const theirsBefore = await exportOf(other.userId);
    const adminRecord = theirsBefore.records.find((r) => r.kind === 'audit.admin.plan_changed')!;
    expect(adminRecord.personal).toEqual([
      { path: 'operator.email', salt: expect.any(String), value: who.email },
    ]);
    expect(before.records[0]).toMatchObject({ seq: 1, kind: 'threat.hit' });
    const stored = await everythingStored();
    for (const value of [who.email, values.ip, values.userAgent, values.legacyIp]) {
      expect(stored).toContain(value); // the scan below can see them
    }

    const erased = await request(t.app).post('/api/privacy/erase').set(as(who)).send(ERASE);
    expect(erased.status).toBe(200);
    expect(erased.body).toEqual({
      account_id: who.userId,
      erased: true,
      evidence_records_kept: before.records.length, // one removed, the removal sealed
      evidence_records_removed: 1,
    });

    // Nothing acts for the account any more, and nothing reads it.
    expect((await request(t.app).get('/api/users/me').set(as(who))).status).toBe(401);
    expect((await request(t.app).get('/api/canaries').set('X-API-Key', key)).status).toBe(401);
    const again = await request(t.app)
      .post('/api/auth/login')
      .send({ email: who.email, password: PASSWORD });
    expect(again.status).toBe(401);
    expect(await t.erasure.resumeUnfinished()).toBe(0);
    await expect(schedule.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    expect(
      await t.mongo.db.collection('weekly_digests').countDocuments({ _id: who.userId as never }),
    ).toBe(0);

    // The log: every kept record still answers the public check, intact, revealing nothing.
    for (const record of before.records.slice(1)) {
      const check = await request(t.app).get(`/api/verify/${record.content_hash}`).expect(200);
      expect(check.body).toMatchObject({ exists: true, intact: true });
      expect(check.text).not.toContain(values.ip);
    }
    await request(t.app).get(`/api/verify/${before.records[0]!.content_hash}`).expect(404);

    // The offline verifier passes the erased account's whole log, and the log kept growing from
    // the checkpoint the export before the erasure was cut at (no leaf rewritten).
    const after = await exportOf(who.userId);
    expect(after.records.every((r) => r.personal.length === 0)).toBe(true);
    const earlier = join(dir, `checkpoint-${who.userId}.txt`);
    await writeFile(earlier, before.cut.checkpoint!.note);
    const consistency = await request(t.app)
      .get('/api/log/consistency')
      .query({ from: before.cut.checkpoint!.size, to: after.cut.checkpoint!.size })
      .expect(200);
    const proofFile = join(dir, `consistency-${who.userId}.json`);
    await writeFile(proofFile, JSON.stringify(consistency.body));
    const verified = await verifyCli(
      after,
      '--earlier-checkpoint',
      earlier,
      '--consistency',
      proofFile,
    );
    expect(verified.code).toBe(0);
    expect(verified.out).toMatch(
      /^VERIFIED: .*chain intact; removals sealed for seq 1–1; every record in checkpoint .*; consistent with the earlier checkpoint$/,
    );
    // The other account's log, where the erased operator's email was sealed, verifies too.
    const theirs = await exportOf(other.userId);
    expect(theirs.records.find((r) => r.kind === 'audit.admin.plan_changed')!.personal).toEqual([]);
    expect((await verifyCli(theirs)).code).toBe(0);
    // Removed, not only unreadable: read by account, so no index on the subject decides it.
    const theirStored = await t.mongo.db
      .collection<{ personal?: { subject: string }[] }>('evidence')
      .find({ accountId: other.userId })
      .toArray();
    const subjects = theirStored.flatMap((r) => r.personal ?? []).map((o) => o.subject);
    expect(subjects).not.toContain(who.userId);

    // No personal value of the account anywhere in the database or the journal, nor in any
    // answer the other account gets.
    await journalForgets([values.ip, values.userAgent]);
    const left = await everythingStored();
    const personal = [
      who.email,
      values.ip,
      values.userAgent,
      values.legacyIp,
      values.channelName,
      values.channelUrl,
      values.memo,
      ...secrets,
    ];
    for (const value of personal) expect(left).not.toContain(value);
    const theirArchive = await request(t.app).get('/api/privacy/export').set(as(other));
    const theirRecords = await request(t.app).get('/api/audit/records').set(as(other));
    for (const answer of [theirArchive.text, theirRecords.text]) {
      for (const value of personal) expect(answer).not.toContain(value);
    }
  });

  it('finishes an erasure a crash cut short, at the next start', async () => {
    const other = await signUpAndLogIn(t.app);
    const { who, values } = await accountWithData(3, other);
    // What a process killed inside an erasure leaves: the account marked, and in the second
    // case its data key already destroyed, the rest still there.
    const victim = await signUpAndLogIn(t.app);
    for (const id of [who.userId, victim.userId]) {
      await t.mongo.db
        .collection('users')
        .updateOne({ _id: id as never }, { $set: { erasingAt: new Date() } });
    }
    await new DataKeys(t.mongo.db).destroy(who.userId, new Date());

    const login = await request(t.app)
      .post('/api/auth/login')
      .send({ email: who.email, password: PASSWORD });
    expect(login.status).toBe(403);
    expect(login.body).toEqual({ detail: 'This account is being erased at its own request' });
    const keys = t.mongo.db.collection('account_data_keys');
    expect(await keys.findOne({ _id: who.userId as never })).not.toHaveProperty('key');

    expect(await t.erasure.resumeUnfinished()).toBe(2);
    await journalForgets([values.ip]);
    expect(await t.erasure.resumeUnfinished()).toBe(0);
    const users = t.mongo.db.collection('users');
    expect(await users.countDocuments({ _id: { $in: [who.userId, victim.userId] } as never })).toBe(
      0,
    );
    const left = await everythingStored();
    for (const value of [who.email, victim.email, values.ip, values.channelUrl]) {
      expect(left).not.toContain(value);
    }
    expect((await verifyCli(await exportOf(who.userId))).code).toBe(0);
  });

  /** The real API on this test's database, with the test's log key. */
  const startApi = () =>
    startApiProcess({
      MONGODB_DB: t.config.MONGODB_DB,
      TEMPORAL_TASK_QUEUE: t.config.TEMPORAL_TASK_QUEUE,
      TRIPWIRE_JOURNAL_DIR: t.config.TRIPWIRE_JOURNAL_DIR,
      EVIDENCE_SIGNING_KEY: logKey.skey,
      LOG_LEVEL: 'info',
    });

  it('when the API is SIGKILLed inside an erasure, then the next start finishes it', async () => {
    const other = await signUpAndLogIn(t.app);
    const { who, values } = await accountWithData(4, other);
    const first = await startApi();
    const users = t.mongo.db.collection('users');
    let killedMidway = false;
    try {
      void fetch(`${first.url}/api/privacy/erase`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...as(who) },
        body: JSON.stringify(ERASE),
      }).catch(() => undefined); // the connection dies with the process
      const deadline = Date.now() + 60_000;
      while (!(await users.findOne({ _id: who.userId as never, erasingAt: { $exists: true } }))) {
        if (Date.now() > deadline) throw new Error('the erasure never started');
      }
      first.process.child.kill('SIGKILL');
      await first.process.exited;
      killedMidway = (await users.countDocuments({ _id: who.userId as never })) === 1;
    } finally {
      await first.process.stop();
    }
    const second = await startApi();
    try {
      // The start finishes it before it listens: nothing of the account is left once it answers.
      expect(await users.countDocuments({ _id: who.userId as never })).toBe(0);
      await journalForgets([values.ip]);
      const left = await everythingStored();
      for (const value of [
        who.email,
        values.ip,
        values.userAgent,
        values.legacyIp,
        values.channelUrl,
      ]) {
        expect(left).not.toContain(value);
      }
      expect(await verifyCli(await exportOf(who.userId))).toEqual({
        code: 0,
        out: expect.stringMatching(/^VERIFIED: /),
      });
      const login = await fetch(`${second.url}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: who.email, password: PASSWORD }),
      });
      expect(login.status).toBe(401);
    } finally {
      await second.process.stop();
    }
    console.log(`SIGKILL landed ${killedMidway ? 'inside the erasure' : 'after it had finished'}`);
  });
});
