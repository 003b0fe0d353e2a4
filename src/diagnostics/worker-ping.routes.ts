import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { DomainError } from '../errors';
import { operationsFor } from '../http/operation';
import { requestIdOf } from '../http/request-id';
import { sessionOf } from '../auth/session-auth';
import type { Temporal } from '../temporal/client';
import { searchAttributes } from '../../workflows/shared';
import type { workerPingWorkflow } from '../../workflows';

const WAIT_MS = 10_000;

export const workerPingView = z
  .object({
    workflow_id: z.string(),
    ping_id: z.string(),
    recorded_at: z.iso.datetime(),
    activity_attempt: z.number().int(),
    round_trip_ms: z.number().int(),
  })
  .meta({ id: 'WorkerPing' });

const operation = operationsFor<Temporal>('Operations');

/**
 * `POST /api/diagnostics/worker-ping`: runs a tiny workflow through a worker and back, so an
 * operator can tell "Temporal is up" (see /readyz) from "workers are processing".
 */
export const workerPingOperations = [
  operation({
    operationId: 'pingWorker',
    method: 'post',
    path: '/api/diagnostics/worker-ping',
    summary: 'Round trip through a worker',
    description:
      'Runs a workflow through a worker and an activity that writes to MongoDB; 504 `worker_unavailable` when no worker answers within 10 s.',
    auth: 'session',
    success: {
      status: 200,
      description: '`{workflow_id, ping_id, recorded_at, activity_attempt, round_trip_ms}`',
    },
    response: workerPingView,
    errors: { 504: 'No worker answered' },
    handler: async ({ req, res }, temporal) => {
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
      return {
        workflow_id: handle.workflowId,
        ping_id: result.pingId,
        recorded_at: result.recordedAt,
        activity_attempt: result.attempt,
        round_trip_ms: Math.round(performance.now() - started),
      };
    },
  }),
];

function noWorker(): DomainError {
  return new DomainError('timed_out', {
    error: 'worker_unavailable',
    message: `No worker completed the ping within ${WAIT_MS / 1000} s: is a worker running on this task queue?`,
  });
}
