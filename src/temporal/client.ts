import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { temporal as proto } from '@temporalio/proto';
import type { Config } from '../config';

export interface Temporal {
  client: Client;
  taskQueue: string;
  /** `ALERT_RECOVERY_SCHEDULE`: the alerts this client starts re-deliver after these pauses. */
  alertRecoveryMs: number[];
  /** Resolves when the frontend answers within the deadline; throws otherwise. */
  ping(timeoutMs: number): Promise<void>;
  /** Workers (identities) that polled the task queue for workflow tasks within `withinMs`. */
  pollers(timeoutMs: number, withinMs: number): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * How long a request waits for a workflow start whose mark the start reconciler keeps: the
 * client's own retries would hold it for about 20 s while Temporal is down.
 */
export const START_DEADLINE_MS = 3_000;

/** Lazy, so the API starts (and /readyz says why it is not ready) while Temporal is still down. */
export function createTemporal(
  config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE' | 'TEMPORAL_TASK_QUEUE'> &
    Partial<Pick<Config, 'ALERT_RECOVERY_SCHEDULE'>>,
): Temporal {
  const connection = Connection.lazy({ address: config.TEMPORAL_ADDRESS });
  // Starts and signals carry the caller's trace context to the workflow (a no-op untraced).
  const client = new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
  });
  return {
    client,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    alertRecoveryMs: config.ALERT_RECOVERY_SCHEDULE ?? [],
    async ping(timeoutMs) {
      await connection.withDeadline(Date.now() + timeoutMs, () =>
        connection.workflowService.getSystemInfo({}),
      );
    },
    async pollers(timeoutMs, withinMs) {
      const { pollers } = await connection.withDeadline(Date.now() + timeoutMs, () =>
        connection.workflowService.describeTaskQueue({
          namespace: config.TEMPORAL_NAMESPACE,
          taskQueue: { name: config.TEMPORAL_TASK_QUEUE },
          taskQueueType: proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        }),
      );
      const since = Date.now() - withinMs;
      return pollers
        .filter((p) => Number(p.lastAccessTime?.seconds ?? 0) * 1000 >= since)
        .map((p) => p.identity ?? 'unknown');
    },
    close: () => connection.close(),
  };
}
