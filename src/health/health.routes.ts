import type { Db } from 'mongodb';
import { z } from 'zod';
import { missingIndexes, type CollectionIndexes } from '../db/mongo';
import { operationsFor } from '../http/operation';
import type { Temporal } from '../temporal/client';

const CHECK_TIMEOUT_MS = 2_000;

export const healthView = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });

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
export const readinessView = z
  .object({
    status: z.enum(['ready', 'unavailable']),
    checks: z.object({ mongodb: checkView, temporal: checkView, indexes: checkView }),
    workers: workersView,
  })
  .meta({ id: 'Readiness' });

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

const operation = operationsFor<HealthDeps>('Operations');

/** `/healthz`: the process answers. `/readyz`: its dependencies answer too. */
export const healthOperations = [
  operation({
    operationId: 'getHealth',
    method: 'get',
    path: '/healthz',
    summary: 'Process is up',
    auth: 'none',
    beforeKeyLayer: true,
    success: { status: 200, description: '`{status: "ok"}`' },
    response: healthView,
    handler: () => ({ status: 'ok' as const }),
  }),
  operation({
    operationId: 'getReadiness',
    method: 'get',
    path: '/readyz',
    summary: 'Ready: MongoDB, Temporal, indexes',
    description:
      '200 `ready` or 503 `unavailable`, with `checks.mongodb`, `checks.temporal`, `checks.indexes`, and `workers` (pollers of the task queue; informational: without a worker, hits are still recorded and their alerts wait in Temporal).',
    auth: 'none',
    beforeKeyLayer: true,
    success: { status: 200, description: 'Ready' },
    response: readinessView,
    errors: { 503: { description: 'Not ready, with the failing checks', response: readinessView } },
    handler: async ({ res }, { db, indexes, temporal }) => {
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
    },
  }),
];
