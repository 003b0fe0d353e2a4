import { Context } from '@temporalio/activity';
import type { WorkerPingsRepository } from '../src/diagnostics/worker-pings.repository';
import type { WorkerPingInput, WorkerPingResult } from '../workflows/shared';

export function workerPingActivities({ pings }: { pings: WorkerPingsRepository }) {
  return {
    async recordWorkerPing(
      input: WorkerPingInput & { workflowId: string },
    ): Promise<WorkerPingResult> {
      const { attempt } = Context.current().info;
      const recorded = await pings.record({ ...input, attempt, recordedAt: new Date() });
      return { pingId: recorded.id, recordedAt: recorded.recordedAt.toISOString(), attempt };
    },
  };
}
