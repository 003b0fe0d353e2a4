/**
 * What a tripwire's alert reads before it sends: the API that opened the event started the alert
 * with the event and its canary as planted, so the alert's first step reads neither again (only
 * the account's channels). Read off the wire of the worker's own client (the driver's command
 * monitoring), against the real database, Temporal and an HTTPS receiver.
 */
import request from 'supertest';
import type { CommandStartedEvent } from 'mongodb';
import { connectMongo, type Database } from '../../src/db/mongo';
import { canaryAccounts } from '../support/canary-accounts';
import { Receiver } from '../support/receiver';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';

let t: TestApp;
let workerMongo: Database;
let worker: { stop(): Promise<void> };
let receiver: Receiver;
/** The collections the worker's commands named, in order. */
const read: string[] = [];
const watch = ({ commandName, command }: CommandStartedEvent) => {
  if (commandName === 'find') read.push(String(command.find));
};

beforeAll(async () => {
  t = await createTestApp({
    config: testConfig({ TRUST_PROXY: 'loopback', ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' }),
  });
  // Named as the tests' own clients are: the suite's index check covers the API's queries.
  workerMongo = await connectMongo(t.config.MONGODB_URI, t.config.MONGODB_DB, {
    appName: 'tripwire-tests',
    monitorCommands: true,
  });
  workerMongo.client.on('commandStarted', watch);
  worker = await startTestWorker(workerMongo.db, t.config.TEMPORAL_TASK_QUEUE);
  receiver = await Receiver.start();
});
afterAll(async () => {
  await worker.stop();
  await workerMongo.client.close();
  await receiver.stop();
  await t.close();
});

it('when a tripwire fires, then its alert tells of the canary as planted without reading the canary or the event', async () => {
  const accounts = canaryAccounts(t.app, receiver);
  const { who, path } = await accounts.account();
  const canary = await accounts.plant(who, 'url', { platform: 'Confluence' });
  read.length = 0;
  await request(t.app)
    .get(new URL(canary.value).pathname)
    .set('X-Forwarded-For', '8.8.8.8')
    .expect(200);
  const [alert] = await accounts.alertsAt(path);
  await t.tripwires.flush();

  expect(alert!.data).toMatchObject({
    summary: 'canary fired',
    canaryId: canary.canary_id,
    memo: 'url in the test',
    canaryAgeDays: 0,
  });
  expect(alert!.data.interpretation).toContain('Confluence');
  expect(read).toContain('alert_channels');
  expect(read).not.toContain('canaries');
  expect(read).not.toContain('threat_events');
}, 60_000);
