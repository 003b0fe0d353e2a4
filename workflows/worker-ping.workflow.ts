import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { WorkerPingInput, WorkerPingResult } from './shared';

const quickWrite = proxyActivities<Activities>({
  startToCloseTimeout: '5s',
  retry: {
    maximumAttempts: 3,
    initialInterval: '500ms',
    backoffCoefficient: 2,
    maximumInterval: '2s',
  },
});

/** Proves the whole path works: a worker picks this up and an activity writes to MongoDB. */
export async function workerPingWorkflow(input: WorkerPingInput): Promise<WorkerPingResult> {
  return quickWrite.recordWorkerPing({ ...input, workflowId: workflowInfo().workflowId });
}
