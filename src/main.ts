import { once } from 'node:events';
import { createApp } from './app';
import { startDecoyMailServer } from './canaries/decoy-mail';
import { systemClock } from './clock';
import { loadConfigOrExit } from './config';
import { ALL_INDEXES } from './db/indexes';
import { connectMongo, ensureIndexes } from './db/mongo';
import { createLogger } from './logger';
import { createTemporal } from './temporal/client';

/** API composition root: config → logger → MongoDB → Temporal client → app → listen. */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const logger = createLogger(config, 'api');
  const mongo = await connectMongo(config.MONGODB_URI, config.MONGODB_DB);
  await ensureIndexes(mongo.db, ALL_INDEXES);
  const temporal = createTemporal(config);
  if (config.ALLOW_PRIVATE_WEBHOOK_TARGETS) {
    logger.warn('ALLOW_PRIVATE_WEBHOOK_TARGETS is on: alert channels may reach private addresses');
  }

  const api = createApp({ config, logger, mongo, temporal });
  const server = api.app.listen(config.PORT, config.HOST);
  await once(server, 'listening');
  logger.info({ address: server.address() }, 'API listening');
  const mail = await startDecoyMailServer({
    host: config.HOST,
    port: config.DECOY_SMTP_PORT,
    tripwires: api.tripwires,
    clock: systemClock,
    log: logger,
  });
  logger.info({ port: mail.port, domain: config.DECOY_EMAIL_DOMAIN }, 'decoy mail listening');
  api.reconciler.start();

  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    server.close(() => {
      void Promise.all([mail.close(), api.reconciler.stop()])
        .then(() => api.flush())
        .catch((err: unknown) =>
          logger.error({ err }, 'could not write the remaining audit trail and hits'),
        )
        .then(() => Promise.allSettled([mongo.client.close(), temporal.close()]))
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
