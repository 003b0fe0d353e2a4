import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import { z } from 'zod';
import { AppError } from '../http/errors';
import { requestIdOf } from '../http/request-id';
import { sessionOf } from '../http/session-auth';
import type { Temporal } from '../temporal/client';
import { searchAttributes } from '../../workflows/shared';
import type { workerPingWorkflow } from '../../workflows';

const WAIT_MS = 10_000;

export const workerPingView = z.object({
  workflow_id: z.string(),
  ping_id: z.string(),
  recorded_at: z.iso.datetime(),
  activity_attempt: z.number().int(),
  round_trip_ms: z.number().int(),
});

/**
 * `POST /api/diagnostics/worker-ping`: runs a tiny workflow through a worker and back, so an
 * operator can tell "Temporal is up" (see /readyz) from "workers are processing".
 */
export function workerPingRoutes(temporal: Temporal): Router {
  const router = Router();

  router.post('/worker-ping', async (req, res) => {
    const { userId } = sessionOf(res);
    const requestId = requestIdOf(req);
    const started = performance.now();
    const handle = await temporal.client.workflow.start<typeof workerPingWorkflow>(
      'workerPingWorkflow',
      {
        taskQueue: temporal.taskQueue,
        workflowId: `worker-ping-${randomUUID()}`,
        args: [{ accountId: userId, requestId }],
        workflowExecutionTimeout: '1m',
        memo: { accountId: userId, requestId },
        typedSearchAttributes: [{ key: searchAttributes.accountId, value: userId }],
      },
    );
    const result = await Promise.race([
      handle.result(),
      new Promise<never>((_, reject) => setTimeout(() => reject(noWorker()), WAIT_MS).unref()),
    ]);
    res.json({
      workflow_id: handle.workflowId,
      ping_id: result.pingId,
      recorded_at: result.recordedAt,
      activity_attempt: result.attempt,
      round_trip_ms: Math.round(performance.now() - started),
    } satisfies z.output<typeof workerPingView>);
  });

  return router;
}

function noWorker(): AppError {
  return new AppError(504, {
    error: 'worker_unavailable',
    message: `No worker completed the ping within ${WAIT_MS / 1000} s: is a worker running on this task queue?`,
  });
}
