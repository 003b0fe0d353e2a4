/**
 * The benchmark's server process: the real app (`createApp`, every middleware) on PORT, and on
 * BARE_PORT the same product handler with the same body parsing but no authentication, scope gate,
 * ownership check or audit trail: the baseline that isolates what authentication costs.
 */
import { once } from 'node:events';
import express from 'express';
import { createApp } from '../../src/app';
import { loadConfigOrExit } from '../../src/config';
import { ALL_INDEXES } from '../../src/db/indexes';
import { connectMongo, ensureIndexes } from '../../src/db/mongo';
import { errorHandler } from '../../src/http/errors';
import { requestLogging } from '../../src/http/request-logging';
import { createLogger } from '../../src/logger';
import { inspect, inspectValidation } from '../../src/shield/shield.routes';
import { createTemporal } from '../../src/temporal/client';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config, 'bench');
  const mongo = await connectMongo(config.MONGODB_URI, config.MONGODB_DB);
  await ensureIndexes(mongo.db, ALL_INDEXES);
  const full = createApp({ config, logger, mongo, temporal: createTemporal(config) }).app;

  const bare = express();
  bare.use(requestLogging(logger));
  bare.use(express.json({ limit: config.BODY_LIMIT }));
  bare.post('/shield/inspect', inspectValidation, inspect);
  bare.use(errorHandler);

  await Promise.all([
    once(full.listen(config.PORT, '127.0.0.1'), 'listening'),
    once(bare.listen(Number(process.env.BARE_PORT), '127.0.0.1'), 'listening'),
  ]);
  console.log('bench server ready');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
