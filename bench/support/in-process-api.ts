/**
 * The API in the benchmark's own process, on the stack `startWorkerStack` made (its database,
 * Temporal and environment), listening on a free loopback port; `stop` closes it as the service
 * shuts down (the hit journal flushed first).
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { ALL_INDEXES } from '../../src/db/indexes';
import { connectMongo, ensureIndexes } from '../../src/db/mongo';
import { createTemporal } from '../../src/temporal/client';
import { accountWithWebhook, type Webhook } from './bench-account';
import { jsonApi } from './json-api';

export async function startInProcessApi(env: Record<string, string>) {
  const config = loadConfig(env);
  const db = await connectMongo(config.MONGODB_URI, config.MONGODB_DB);
  await ensureIndexes(db.db, ALL_INDEXES);
  const temporal = createTemporal(config);
  const api = createApp({ config, logger: pino({ level: 'warn' }), mongo: db, temporal });
  const server = api.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = jsonApi(base);
  return {
    config,
    db,
    temporal,
    api,
    base,
    call,
    /** See `accountWithWebhook`. */
    accountWithWebhook: (webhook: Webhook) => accountWithWebhook(call, db.db, webhook),
    async stop() {
      server.close();
      await api.flush();
      await temporal.close();
      await db.client.close();
    },
  };
}
