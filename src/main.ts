import { once } from 'node:events';
import { createApp } from './app';
import { startPublicListeners } from './canaries/listeners/public-listeners';
import { loadConfigOrExit } from './config';
import { ALL_INDEXES } from './db/indexes';
import { connectMongo, ensureIndexes } from './db/mongo';
import { answerClientErrors } from './http/client-errors';
import { loadSigningKey } from './evidence/log/signing-key';
import { createLogger } from './logger';
import { logUnhandledRejections } from './unhandled-rejections';
import { createTemporal } from './temporal/client';
import { startTracing } from './tracing';

/** How often an erasure that failed part-way in this process is tried again. */
const ERASURE_RETRY_MS = 60_000;

/** API composition root: config → logger → MongoDB → Temporal client → app → listen. */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config, 'api');
  logUnhandledRejections(logger);
  const tracing = startTracing('tripwire-api', {
    otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
  });
  const mongo = await connectMongo(config.MONGODB_URI, config.MONGODB_DB);
  await ensureIndexes(mongo.db, ALL_INDEXES);
  const temporal = createTemporal(config);
  if (config.ALLOW_PRIVATE_WEBHOOK_TARGETS) {
    logger.warn('ALLOW_PRIVATE_WEBHOOK_TARGETS is on: alert channels may reach private addresses');
  }

  const signer = await loadSigningKey(config, logger);
  const api = createApp({ config, logger, mongo, temporal, signer });
  // An erasure a crash cut short is finished before any request can reach what it left.
  await api.erasure.resumeUnfinished();
  const stopErasures = api.erasure.resumeEvery(ERASURE_RETRY_MS);
  const stopCheckpoints = api.checkpoints.run(config.CHECKPOINT_INTERVAL_SECONDS * 1000, logger);
  const server = api.app.listen(config.PORT, config.HOST);
  answerClientErrors(server);
  await once(server, 'listening');
  logger.info({ address: server.address() }, 'API listening');
  const listeners = await startPublicListeners(config, api, logger);
  api.reconciler.start();
  api.tripwires.startReplay();

  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    stopErasures();
    api.endStreams();
    server.close(() => {
      void Promise.all([listeners.close(), api.reconciler.stop(), stopCheckpoints()])
        .then(() => api.flush())
        .catch((err: unknown) =>
          logger.error({ err }, 'could not write the remaining audit trail and hits'),
        )
        .then(() =>
          Promise.allSettled([mongo.client.close(), temporal.close(), tracing?.shutdown()]),
        )
        .then(() => process.exit(0));
    });
    server.closeIdleConnections();
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main().catch((err: unknown) => {
  console.error('API failed to start:', err);
  process.exit(1);
});
