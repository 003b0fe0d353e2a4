/**
 * A canary's tally is written once per seal, however many of its hits the seal takes: a seal
 * gathers the hits of many recorder batches, and each update of a canary's tally rewrites its
 * whole document. Read off the wire (the driver's command monitoring), against the real database.
 */
import request from 'supertest';
import type { CommandStartedEvent, Document } from 'mongodb';
import { plantUrlCanary } from '../support/canary-accounts';
import { createTestApp, type TestApp } from '../support/test-app';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ monitorCommands: true });
});
afterAll(async () => {
  await t.close();
});

it('when 30 hits of one canary arrive one after another, then each seal updates its tally in one statement, and the tally counts all 30', async () => {
  const { canaryId: canary_id, path, auth } = await plantUrlCanary(t.app, 'wiki link');
  const tallyUpdates: Document[][] = [];
  const client = t.appMongo.client;
  const watch = (event: CommandStartedEvent) => {
    if (event.commandName === 'update' && event.command.update === 'canaries') {
      tallyUpdates.push(event.command.updates as Document[]);
    }
  };
  client.on('commandStarted', watch);
  try {
    for (let i = 0; i < 30; i++) await request(t.app).get(path).expect(200);
    await t.tripwires.flush();
  } finally {
    client.off('commandStarted', watch);
  }

  const targets = tallyUpdates.map((updates) => updates.map((u) => (u.q as { _id: string })._id));
  expect(targets.length).toBeGreaterThan(0);
  for (const ids of targets) expect(ids).toEqual([canary_id]);
  const counted = tallyUpdates
    .flat()
    .reduce((sum, u) => sum + (u.u as { $inc: { hitCount: number } }).$inc.hitCount, 0);
  expect(counted).toBe(30);
  const listed = await request(t.app).get(`/api/canaries/${canary_id}`).set(auth);
  expect(listed.body).toMatchObject({ hit_count: 30 });
});
