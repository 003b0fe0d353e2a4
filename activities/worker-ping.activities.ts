import { Context } from '@temporalio/activity';
import type { Db } from 'mongodb';
import { WorkerPingsRepository } from '../src/diagnostics/worker-pings.repository';
import type { WorkerPingInput, WorkerPingResult } from '../workflows/shared';

export function workerPingActivities({ db }: { db: Db }) {
  const pings = new WorkerPingsRepository(db);
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
