import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { Config } from '../config';

export interface Temporal {
  client: Client;
  taskQueue: string;
  /** Resolves when the frontend answers within the deadline; throws otherwise. */
  ping(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/** Lazy, so the API starts (and /readyz says why it is not ready) while Temporal is still down. */
export function createTemporal(
  config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE' | 'TEMPORAL_TASK_QUEUE'>,
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
    async ping(timeoutMs) {
      await connection.withDeadline(Date.now() + timeoutMs, () =>
        connection.workflowService.getSystemInfo({}),
      );
    },
    close: () => connection.close(),
  };
}
