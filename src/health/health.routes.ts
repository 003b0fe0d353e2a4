import { Router } from 'express';
import type { Db } from 'mongodb';
import { z } from 'zod';
import { missingIndexes, type CollectionIndexes } from '../db/mongo';
import type { Temporal } from '../temporal/client';

const CHECK_TIMEOUT_MS = 2_000;

export const healthView = z.object({ status: z.literal('ok') });

/** A poll within this long counts as a live worker (workers poll again at least every minute). */
const POLLED_WITHIN_MS = 90_000;

const checkView = z.object({ ok: z.boolean(), error: z.string().optional() });
type Check = z.output<typeof checkView>;
const workersView = checkView.extend({ pollers: z.number().int().optional() });
/**
 * Both answers of `/readyz`: 200 ready, 503 unavailable with the failing checks. `workers` is
 * reported but does not make the API unready: without a worker, hits are still recorded and their
 * alerts wait in Temporal until one polls.
 */
export const readinessView = z.object({
  status: z.enum(['ready', 'unavailable']),
  checks: z.object({ mongodb: checkView, temporal: checkView, indexes: checkView }),
  workers: workersView,
});

async function check(run: () => Promise<void>): Promise<Check> {
  try {
    await run();
    return { ok: true };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

async function workersPolling(
  temporal: Pick<Temporal, 'pollers' | 'taskQueue'>,
): Promise<z.output<typeof workersView>> {
  try {
    const pollers = (await temporal.pollers(CHECK_TIMEOUT_MS, POLLED_WITHIN_MS)).length;
    return pollers
      ? { ok: true, pollers }
      : { ok: false, pollers, error: `no worker polls task queue ${temporal.taskQueue}` };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}

export interface HealthDeps {
  db: Db;
  indexes: readonly CollectionIndexes[];
  temporal: Pick<Temporal, 'ping' | 'pollers' | 'taskQueue'>;
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
    const workers = temporalCheck.ok
      ? await workersPolling(temporal)
      : { ok: false, error: 'Temporal unreachable' };
    const checks = { mongodb, temporal: temporalCheck, indexes: indexCheck };
    const ready = Object.values(checks).every((c) => c.ok);
    const body: z.output<typeof readinessView> = {
      status: ready ? 'ready' : 'unavailable',
      checks,
      workers,
    };
    res.status(ready ? 200 : 503).json(body);
  });

  return router;
}
