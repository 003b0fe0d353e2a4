import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { FLOOR_STEP } from './activity-options';

const remote = proxyActivities<Activities>(FLOOR_STEP);
const local = proxyLocalActivities<Activities>(FLOOR_STEP);

/**
 * The engine's floor, for benchmarks to measure the alert path against: one activity that does
 * nothing, as an activity task (two workflow tasks) or as a local activity (one workflow task).
 */
export async function floorWorkflow({ local: asLocal }: { local: boolean }): Promise<void> {
  await (asLocal ? local : remote).doNothing();
}
