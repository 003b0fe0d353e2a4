import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { FLOOR_STEP } from './activity-options';

const remote = proxyActivities<Activities>(FLOOR_STEP);
const local = proxyLocalActivities<Activities>(FLOOR_STEP);

/**
 * The engine's floor, for benchmarks to measure the alert path against: one activity that does
 * nothing, as an activity task (two workflow tasks) or as a local activity (one workflow task);
 * `steps` of them one after another show what each further step costs.
 */
export async function floorWorkflow({
  local: asLocal,
  steps = 1,
}: {
  local: boolean;
  steps?: number;
}): Promise<void> {
  for (let step = 0; step < steps; step++) await (asLocal ? local : remote).doNothing();
}
