/**
 * The benchmark's server process, four apps on one database:
 * - PORT: the real app (`createApp`, every middleware, MongoDB meters), with plan limits too high
 *   to bind, so every request pays for metering but none is refused;
 * - UNMETERED_PORT: the same app with a meter store that counts nothing: authentication, scope
 *   gate, ownership check and audit trail without the cost of the meters;
 * - BARE_PORT: the same product handler (rules, tripwire check, sealed record) and body parsing
 *   with none of those: the baseline;
 * - STACKED_PORT: that handler behind the app's HTTP stack (logging, security headers, tracing,
 *   metrics, cookies, console files), still without credentials or meters: what the stack costs
 *   apart from them.
 */
import { once } from 'node:events';
import express, { type RequestHandler } from 'express';
import { createApp, httpStack } from '../../src/app';
import { presenterOf } from '../../src/canaries/tripwire.routes';
import { loadConfigOrExit } from '../../src/config';
import { ALL_INDEXES } from '../../src/db/indexes';
import { connectMongo, ensureIndexes } from '../../src/db/mongo';
import { errorHandler } from '../../src/http/errors';
import { requestLogging } from '../../src/http/request-logging';
import { createLogger } from '../../src/logger';
import type { CounterStore } from '../../src/metering/counters.repository';
import { PLAN_IDS } from '../../src/plans';
import type { PlanLimits } from '../../src/metering/plan-limits';
import { parseBody } from '../../src/http/validate';
import { inspectSchema } from '../../src/shield/shield.routes';
import { createTemporal } from '../../src/temporal/client';

const unbounded = { perMonth: 1e12, perDay: 1e12, burstPerMinute: 1e12 };
const limits = Object.fromEntries(
  PLAN_IDS.map((plan) => [plan, { shield_inspections: unbounded, canary_plants: unbounded }]),
) as PlanLimits;

const nothing = { minute: 0, day: 0, month: 0 };
const countsNothing: CounterStore = {
  take: () => Promise.resolve({ admitted: true, counts: nothing }),
  giveBack: () => Promise.resolve(),
  read: (windows) => Promise.resolve(windows.map(() => nothing)),
};

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config, 'bench');
  const mongo = await connectMongo(config.MONGODB_URI, config.MONGODB_DB);
  await ensureIndexes(mongo.db, ALL_INDEXES);
  const deps = { config, logger, mongo, temporal: createTemporal(config), planLimits: limits };
  const api = createApp(deps);
  const full = api.app;
  const unmetered = createApp({ ...deps, counters: countsNothing }).app;

  // The same validation and inspection, with the body's user_id as the account: no
  // authentication, no metering.
  const inspect: RequestHandler = async (req, res) => {
    const { user_id, user_message } = parseBody(inspectSchema, req.body);
    res.json({
      user_id,
      ...(await api.shield.inspect(presenterOf(req), user_id, user_id, user_message)),
    });
  };
  const bare = express();
  bare.use(requestLogging(logger));
  bare.use(express.json({ limit: config.BODY_LIMIT }));
  bare.post('/shield/inspect', inspect);
  bare.use(errorHandler);
  const stacked = express();
  stacked.use(...httpStack(config, logger));
  stacked.post('/shield/inspect', inspect);
  stacked.use(errorHandler);

  await Promise.all([
    once(full.listen(config.PORT, '127.0.0.1'), 'listening'),
    once(unmetered.listen(Number(process.env.UNMETERED_PORT), '127.0.0.1'), 'listening'),
    once(bare.listen(Number(process.env.BARE_PORT), '127.0.0.1'), 'listening'),
    once(stacked.listen(Number(process.env.STACKED_PORT), '127.0.0.1'), 'listening'),
  ]);
  console.log('bench server ready');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
