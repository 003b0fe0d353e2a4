import { copyFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import request from 'supertest';
import { plantUrlCanary } from '../support/canary-accounts';
import { misfiledHits, sealedHitIds } from '../support/sealed-hits';
import { createTestApp, type TestApp } from '../support/test-app';

let t: TestApp;
beforeAll(async () => (t = await createTestApp()));
afterAll(() => t.close());

const segments = async () =>
  (await readdir(t.config.TRIPWIRE_JOURNAL_DIR)).filter((n) => n.endsWith('.jsonl'));

describe('the tripwire journal, replayed into the database', () => {
  it('when a journal with recorded and unrecorded hits is replayed, then only the unrecorded are added, to the same event', async () => {
    const { canaryId, path } = await plantUrlCanary(t.app, 'journal');
    for (let i = 0; i < 3; i++)
      await request(t.app).get(path).set('user-agent', 'curl/8').expect(200);
    await request(t.app).get('/r/not-a-canary').set('user-agent', 'curl/8').expect(200);
    await t.tripwires.flush();

    // What a process killed before it could delete its segment leaves, plus one hit it answered
    // but never recorded (a fresh hit id, the same presented token).
    const [segment] = await segments();
    const lines = (await readFile(join(t.config.TRIPWIRE_JOURNAL_DIR, segment!), 'utf8')).trim();
    const [first] = lines.split('\n').map((l) => JSON.parse(l) as { id: string });
    const unrecorded = { ...first, id: 'hit_answered_not_recorded', at: new Date().toISOString() };
    const orphan = join(t.config.TRIPWIRE_JOURNAL_DIR, 'orphan.jsonl');
    await copyFile(join(t.config.TRIPWIRE_JOURNAL_DIR, segment!), orphan);
    await writeFile(orphan, `${JSON.stringify(unrecorded)}\n`, { flag: 'a' });

    const next = await createTestApp({ config: t.config });
    try {
      await next.tripwires.replayJournal();
      await next.tripwires.replayJournal();
    } finally {
      await next.disconnect();
    }
    const hits = await t.mongo.db.collection('threat_hits').find({ canaryId }).toArray();
    const events = await t.mongo.db.collection('threat_events').find({ canaryId }).toArray();
    expect([hits.length, events.length]).toEqual([4, 1]);
    expect(await sealedHitIds(t.mongo.db, canaryId)).toEqual(hits.map((h) => h._id).sort());
    expect(await misfiledHits(t.mongo.db, canaryId)).toEqual([]);
    expect(hits.map((h) => h._id)).toContain('hit_answered_not_recorded');
    expect(events[0]!.hitCount).toBe(4);
    expect(await segments()).not.toContain('orphan.jsonl');
  });
});
