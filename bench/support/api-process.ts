/**
 * The API as the service runs it, built, in a process of its own (`dist/src/main.js`), on the stack
 * `startWorkerStack` made (its database, Temporal and environment), on a free loopback port: its
 * event loop serves requests only, while this process is the benchmark's client and receiver, as
 * an attacker's client and a customer's endpoint would be. This process reads the database and
 * Temporal through its own clients. `BENCH_API_NODE_FLAGS` passes flags to the API's process.
 */
import { loadConfig } from '../../src/config';
import { connectMongo } from '../../src/db/mongo';
import { createTemporal } from '../../src/temporal/client';
import { startApiProcess } from '../../test/support/api-process';
import { accountWithWebhook, type Webhook } from './bench-account';
import { builtStartArgs, nodeFlagsFrom } from './built';
import { jsonApi } from './json-api';

export async function startApiOnStack(env: Record<string, string>) {
  const api = await startApiProcess(env, undefined, [
    ...nodeFlagsFrom('BENCH_API_NODE_FLAGS'),
    ...builtStartArgs('start:api'),
  ]);
  const config = loadConfig(env);
  const db = await connectMongo(config.MONGODB_URI, config.MONGODB_DB);
  const temporal = createTemporal(config);
  const call = jsonApi(api.url);
  return {
    db,
    temporal,
    base: api.url,
    call,
    pid: api.process.child.pid!,
    /** See `accountWithWebhook`. */
    accountWithWebhook: (webhook: Webhook) => accountWithWebhook(call, db.db, webhook),
    /**
     * Once the API has counted `count` hits on these canaries, or after `withinMs`: the number it
     * has. Read from the canaries' tallies, the seal's last write, by `_id`: counting the threat
     * log by canary has no index to use, so each poll would scan every hit of the run in the
     * database's CPU that the run is charged with.
     */
    async hitsCounted(canaryIds: string[], count: number, withinMs = 60_000): Promise<number> {
      const deadline = Date.now() + withinMs;
      const canaries = db.db.collection<{ _id: string; hitCount?: number }>('canaries');
      for (;;) {
        const tallies = await canaries
          .find({ _id: { $in: canaryIds } }, { projection: { hitCount: 1 } })
          .toArray();
        const counted = tallies.reduce((sum, c) => sum + (c.hitCount ?? 0), 0);
        if (counted >= count || Date.now() > deadline) return counted;
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    /** The hits on these canaries in the threat log: one scan, for a run's end. */
    hitsLogged: (canaryIds: string[]): Promise<number> =>
      db.db.collection('threat_hits').countDocuments({ canaryId: { $in: canaryIds } }),
    async stop() {
      await api.process.stop();
      await temporal.close();
      await db.client.close();
    },
  };
}
