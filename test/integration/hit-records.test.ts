/**
 * A storm's hits from one source share a sealed record: a flood on one canary seals a few records,
 * not one per hit, and every hit is in exactly one record, the one its threat-log line names.
 * Against the real database, through the HTTP tripwire.
 */
import request from 'supertest';
import { plantUrlCanary } from '../support/canary-accounts';
import { hitRecords, misfiledHits, sealedHitIds } from '../support/sealed-hits';
import { createTestApp, type TestApp } from '../support/test-app';

let t: TestApp;
beforeAll(async () => (t = await createTestApp()));
afterAll(() => t.close());

type LoggedHit = { _id: string; source: { userAgent: string } };
const loggedHits = (canaryId: string) =>
  t.mongo.db.collection<LoggedHit>('threat_hits').find({ canaryId }).toArray();

describe('sealed records of tripwire hits', () => {
  it('when 40 hits of one source arrive at once, then they share records and each is sealed once, in the record its log names', async () => {
    const { canaryId, path, auth } = await plantUrlCanary(t.app, 'shared records');
    await Promise.all(
      Array.from({ length: 40 }, () =>
        request(t.app).get(path).set('user-agent', 'curl/8').expect(200),
      ),
    );
    await t.tripwires.flush();

    const hits = await loggedHits(canaryId);
    const records = await hitRecords(t.mongo.db, canaryId);
    expect(hits).toHaveLength(40);
    expect(await sealedHitIds(t.mongo.db, canaryId)).toEqual(hits.map((h) => h._id).sort());
    expect(records.length).toBeLessThan(40);
    expect(await misfiledHits(t.mongo.db, canaryId)).toEqual([]);
    // A shared record verifies like any other.
    const shared = records.find((r) => r.data.hits.length > 1)!;
    const verified = await request(t.app)
      .post(`/api/audit/records/${shared._id}/verify`)
      .set(auth)
      .expect(200);
    expect(verified.body).toMatchObject({ verified: true, tampered: false });
  });

  it('when one source changes its user agent mid-storm, then each record holds the hits of one agent', async () => {
    const { canaryId, path } = await plantUrlCanary(t.app, 'shared records');
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request(t.app)
          .get(path)
          .set('user-agent', i % 2 ? 'curl/8' : 'python-requests/2')
          .expect(200),
      ),
    );
    await t.tripwires.flush();

    const agentOf = new Map((await loggedHits(canaryId)).map((h) => [h._id, h.source.userAgent]));
    const records = await hitRecords(t.mongo.db, canaryId);
    expect(records.flatMap((r) => r.data.hits)).toHaveLength(20);
    for (const record of records) {
      expect(new Set(record.data.hits.map((h) => agentOf.get(h.hit_id))).size).toBe(1);
    }
  });
});
