import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Express } from 'express';
import pino from 'pino';
import { createApp } from '../../src/app';
import type { CanariesRepository } from '../../src/canaries/canaries.repository';
import type { Tripwires } from '../../src/canaries/tripwires';
import type { Clock } from '../../src/clock';
import { loadConfig, type Config } from '../../src/config';
import { ALL_INDEXES } from '../../src/db/indexes';
import { connectMongo, ensureIndexes, type Database } from '../../src/db/mongo';
import type { CounterStore } from '../../src/metering/counters.repository';
import type { PlanLimits } from '../../src/metering/plan-limits';
import { createTemporal, type Temporal } from '../../src/temporal/client';
import type { Checkpoints } from '../../src/evidence/log/checkpoints';
import { generateSigner, type NoteSigner } from '../../src/evidence/log/signed-note';
import type { StartReconciler } from '../../src/temporal/start-reconciler';
import type { PrivacyErasure } from '../../src/privacy/privacy-erase';

export interface TestApp {
  app: Express;
  config: Config;
  /** The test's own client, for arranging and checking data. */
  mongo: Database;
  /** The client the app itself uses. */
  appMongo: Database;
  temporal: Temporal;
  tripwires: Tripwires;
  /** The app's canaries (the public tripwire listener reads redirects and web images from them). */
  canaries: CanariesRepository;
  /** Not running: tests call its passes. */
  reconciler: StartReconciler;
  /** Account erasures: tests call the start's pass that finishes those left part-way. */
  erasure: PrivacyErasure;
  /** The evidence log's checkpoints, and the key that signs them (the test's own). */
  checkpoints: Checkpoints;
  signer: NoteSigner;
  /** Drops the test's database, then disconnects. */
  close(): Promise<void>;
  /** Disconnects from the servers, leaving the data (for a second app on the same database). */
  disconnect(): Promise<void>;
}

/** Settings for one test file: its own database and task queue on the shared test servers. */
export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    MONGODB_URI: process.env.MONGODB_URI,
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS,
    MONGODB_DB: `test_${randomUUID().replace(/-/g, '').slice(0, 16)}`,
    TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Test files sign up many accounts at once; one hashing slot (the production default) would
    // queue them past its limit and answer 503 login_busy, which test/unit/passwords.test.ts covers.
    PASSWORD_HASHING_CONCURRENCY: '4',
    TRIPWIRE_JOURNAL_DIR: mkdtempSync(join(tmpdir(), 'tripwire-journal-')),
    // Test files fail many sign-ins on purpose; the tests of the budget set their own.
    LOGIN_FAILURES_PER_MINUTE: '100000',
    // A failed alert ends at once; the recovery tests set a short schedule of their own.
    ALERT_RECOVERY_SCHEDULE: '',
    ...overrides,
  });
}

export const testLogger = (config: Config) => pino({ level: config.LOG_LEVEL });

/** The real app on the real servers, with an optional clock the test can move. */
export async function createTestApp(
  options: {
    clock?: Clock;
    config?: Config;
    planLimits?: PlanLimits;
    counters?: CounterStore;
    signer?: NoteSigner;
    /** The app's client reports its commands (`commandStarted`), for tests that read the wire. */
    monitorCommands?: boolean;
  } = {},
): Promise<TestApp> {
  const signer = options.signer ?? generateSigner('tripwire.test/evidence').signer;
  const config = options.config ?? testConfig();
  const appMongo = await connectMongo(config.MONGODB_URI, config.MONGODB_DB, {
    monitorCommands: options.monitorCommands,
  });
  // The test's own reads and writes go through a client of their own, so the suite's index check
  // (test/support/global-teardown.ts) sees only the queries the service sends.
  const mongo = await connectMongo(config.MONGODB_URI, config.MONGODB_DB, {
    appName: 'tripwire-tests',
  });
  await ensureIndexes(mongo.db, ALL_INDEXES);
  const temporal = createTemporal(config);
  const { app, flush, tripwires, canaries, checkpoints, reconciler, erasure } = createApp({
    config,
    logger: testLogger(config),
    mongo: appMongo,
    temporal,
    clock: options.clock,
    planLimits: options.planLimits,
    counters: options.counters,
    signer,
  });
  const disconnect = async () => {
    await Promise.all([mongo.client.close(), appMongo.client.close(), temporal.close()]);
  };
  return {
    app,
    config,
    mongo,
    appMongo,
    temporal,
    tripwires,
    canaries,
    reconciler,
    erasure,
    checkpoints,
    signer,
    async close() {
      // Disconnect even when the flush or the drop fails (a test that stopped the database):
      // a client left open keeps its heartbeat timer, and with it the whole Jest process, alive.
      try {
        await flush();
        await mongo.db.dropDatabase();
      } finally {
        await disconnect();
      }
    },
    disconnect,
  };
}

/** A clock that stands still until the test moves it. */
export function manualClock(start = new Date('2026-03-01T12:00:00Z')) {
  let now = start.getTime();
  const clock: Clock = () => new Date(now);
  return { clock, advance: (ms: number) => (now += ms) };
}
