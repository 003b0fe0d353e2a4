import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { PING_WRITE } from './activity-options';
import type { WorkerPingInput, WorkerPingResult } from './shared';

const quickWrite = proxyActivities<Activities>(PING_WRITE);

/** Proves the whole path works: a worker picks this up and an activity writes to MongoDB. */
export async function workerPingWorkflow(input: WorkerPingInput): Promise<WorkerPingResult> {
  return quickWrite.recordWorkerPing({ ...input, workflowId: workflowInfo().workflowId });
}
