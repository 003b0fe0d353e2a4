/**
 * Fault suite, a tripwire seal cut between its writes: the API's database (a real process of this
 * file's own) is SIGKILLed just before the seal's write to the threat log reaches it, after the
 * hits' evidence append was acknowledged, and started again; the API then replays its journal as
 * it does every few seconds. Every hit must be recorded once: one threat-log line each, sealed once
 * in the evidence log, and the event's and the canary's counts equal to the hits.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db } from 'mongodb';
import request from 'supertest';
import { createApp, type Api } from '../../src/app';
import type { Config } from '../../src/config';
import { ALL_INDEXES } from '../../src/db/indexes';
import { ensureIndexes } from '../../src/db/mongo';
import { createTemporal, type Temporal } from '../../src/temporal/client';
import { freePort, startLocalMongo, type LocalMongo } from '../../tools/stack';
import { plantUrlCanary } from '../support/canary-accounts';
import { killableClient } from '../support/mongo-killer';
import { hitRecords, misfiledHits, sealedHitIds } from '../support/sealed-hits';
import { until } from '../support/process-stack';
import { testConfig, testLogger } from '../support/test-app';

jest.setTimeout(240_000);

const HITS = 5;
let dir: string;
let port: number;
let mongo: LocalMongo;
let temporal: Temporal;
let api: Api;
let config: Config;
let killer: Awaited<ReturnType<typeof killableClient>>;
let db: Db;

const start = async () => {
  mongo = await startLocalMongo({ dataDir: dir, port, log: () => undefined });
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tripwire-hit-seal-'));
  port = await freePort();
  await start();
  config = testConfig({ MONGODB_URI: mongo.address });
  killer = await killableClient(() => mongo);
  db = killer.client.db(config.MONGODB_DB);
  await ensureIndexes(db, ALL_INDEXES);
  temporal = createTemporal(config);
  api = createApp({
    config,
    logger: testLogger(config),
    mongo: { client: killer.client, db },
    temporal,
  });
});

afterAll(async () => {
  await api?.flush();
  await killer?.client.close();
  await temporal?.close();
  await mongo?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The killed database started again, and the journal replayed until `hits` hits are logged. */
async function restartAndReplay(canaryId: string, hits: number): Promise<number> {
  // The killed server holds its port until its process is gone.
  await mongo.process.exited;
  await start();
  // The journal's own pass, as its timer runs it: the segment that failed is replayed.
  return until('the hits logged by the replay', async () => {
    await api.tripwires.replayJournal();
    const count = await db.collection('threat_hits').countDocuments({ canaryId });
    return count >= hits ? count : undefined;
  });
}

describe('a tripwire seal cut between its evidence and its threat log', () => {
  it('when the database is killed after the hits are sealed and before they are logged, then the replay records each hit once, sealed once', async () => {
    const { canaryId, path } = await plantUrlCanary(api.app, 'seal cut');

    killer.killBefore('insert', 'threat_hits');
    const answered = await Promise.all(
      Array.from({ length: HITS }, () => request(api.app).get(path).set('user-agent', 'curl/8')),
    );
    expect(answered.map((r) => r.status)).toEqual(Array(HITS).fill(200));
    await api.tripwires.flush();
    expect(killer.killed).toBe(true);
    const logged = await restartAndReplay(canaryId, HITS);
    const loggedIds = await db
      .collection<{ _id: string }>('threat_hits')
      .find({ canaryId })
      .map((h) => h._id)
      .toArray();
    const events = await db.collection('threat_events').find({ canaryId }).toArray();
    const canary = await db.collection('canaries').findOne({ _id: canaryId as never });
    expect({
      logged,
      events: events.length,
      eventCount: events[0]?.hitCount,
      tally: canary?.hitCount,
    }).toEqual({ logged: HITS, events: 1, eventCount: HITS, tally: HITS });
    // Each logged hit sealed once, and logged with the record that holds it: the replay found the
    // records the cut seal had written.
    expect(await sealedHitIds(db, canaryId)).toEqual(loggedIds.sort());
    expect(await misfiledHits(db, canaryId)).toEqual([]);
  });

  it("when a cut seal's hit is replayed with hits that came during the outage, then it stays in the record it was sealed in and the others are sealed anew", async () => {
    const { canaryId, path } = await plantUrlCanary(api.app, 'seal cut');

    killer.killBefore('insert', 'threat_hits');
    await request(api.app).get(path).set('user-agent', 'curl/8').expect(200);
    await api.tripwires.flush();
    expect(killer.killed).toBe(true);
    // Answered from the journal while the database is down: recorded by the replay.
    for (let i = 0; i < 3; i++) {
      await request(api.app).get(path).set('user-agent', 'curl/8').expect(200);
    }
    await restartAndReplay(canaryId, 4);

    const records = await hitRecords(db, canaryId);
    expect(records.map((r) => r.data.hits.length)).toEqual([1, 3]);
    expect(await misfiledHits(db, canaryId)).toEqual([]);
  });
});
