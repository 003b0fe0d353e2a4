/**
 * The API in the benchmark's own process, on the stack `startWorkerStack` made (its database,
 * Temporal and environment), listening on a free loopback port; `stop` closes it as the service
 * shuts down (the hit journal flushed first).
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { UsersRepository } from '../../src/accounts/users.repository';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { ALL_INDEXES } from '../../src/db/indexes';
import { connectMongo, ensureIndexes } from '../../src/db/mongo';
import { createTemporal } from '../../src/temporal/client';
import { jsonApi } from './json-api';

const PASSWORD = 'benchmark password 123';

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
    /**
     * A new account on the enterprise plan (no limit gets in a benchmark's way) with one signed
     * webhook channel: its id, and its session's headers for the calls that follow.
     */
    async accountWithWebhook(webhook: { name: string; url: string; secret: string }) {
      const body = JSON.stringify({
        email: `${webhook.name}-${Date.now()}@example.com`,
        password: PASSWORD,
      });
      const { user_id: userId } = await call('/api/auth/signup', { method: 'POST', body });
      await new UsersRepository(db.db).setPlan(userId as string, 'enterprise', new Date());
      const { token } = await call('/api/auth/login', { method: 'POST', body });
      const auth = { authorization: `Bearer ${token as string}` };
      await call('/api/alert-channels', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ kind: 'webhook', ...webhook }),
      });
      return { auth, userId: userId as string };
    },
    async stop() {
      server.close();
      await api.flush();
      await temporal.close();
      await db.client.close();
    },
  };
}
