import { Router } from 'express';
import type { Db } from 'mongodb';
import { missingIndexes, type CollectionIndexes } from '../db/mongo';
import type { Temporal } from '../temporal/client';

const CHECK_TIMEOUT_MS = 2_000;

interface Check {
  ok: boolean;
  error?: string;
}

async function check(run: () => Promise<void>): Promise<Check> {
  try {
    await run();
    return { ok: true };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

export interface HealthDeps {
  db: Db;
  indexes: readonly CollectionIndexes[];
  temporal: Pick<Temporal, 'ping'>;
}

/** `/healthz`: the process answers. `/readyz`: its dependencies answer too. */
export function healthRoutes({ db, indexes, temporal }: HealthDeps): Router {
  const router = Router();

  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  router.get('/readyz', async (_req, res) => {
    const [mongodb, temporalCheck] = await Promise.all([
      check(async () => {
        await db.command({ ping: 1 }, { timeoutMS: CHECK_TIMEOUT_MS });
      }),
      check(() => temporal.ping(CHECK_TIMEOUT_MS)),
    ]);
    const indexCheck = mongodb.ok
      ? await check(async () => {
          const missing = await missingIndexes(db, indexes);
          if (missing.length) throw new Error(`missing: ${missing.join(', ')}`);
        })
      : { ok: false, error: 'MongoDB unreachable' };
    const checks = { mongodb, temporal: temporalCheck, indexes: indexCheck };
    const ready = Object.values(checks).every((c) => c.ok);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable', checks });
  });

  return router;
}
