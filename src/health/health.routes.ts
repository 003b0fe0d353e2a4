import { Router } from 'express';
import type { Db } from 'mongodb';
import { z } from 'zod';
import { missingIndexes, type CollectionIndexes } from '../db/mongo';
import type { Temporal } from '../temporal/client';

const CHECK_TIMEOUT_MS = 2_000;

export const healthView = z.object({ status: z.literal('ok') });

const checkView = z.object({ ok: z.boolean(), error: z.string().optional() });
type Check = z.output<typeof checkView>;
/** Both answers of `/readyz`: 200 ready, 503 unavailable with the failing checks. */
export const readinessView = z.object({
  status: z.enum(['ready', 'unavailable']),
  checks: z.object({ mongodb: checkView, temporal: checkView, indexes: checkView }),
});

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
    res.json({ status: 'ok' } satisfies z.output<typeof healthView>);
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
    const body: z.output<typeof readinessView> = {
      status: ready ? 'ready' : 'unavailable',
      checks,
    };
    res.status(ready ? 200 : 503).json(body);
  });

  return router;
}
