import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { FLOOR_STEP } from './activity-options';
import type { AlertInput } from './shared';

const remote = proxyActivities<Activities>(FLOOR_STEP);
const local = proxyLocalActivities<Activities>(FLOOR_STEP);

/**
 * The engine's floor, for benchmarks to measure the alert path against: one activity that does
 * nothing, as an activity task (two workflow tasks) or as a local activity (one workflow task).
 * With `asAlert` it carries an alert's input and, started with an alert's options, its memo and
 * search attributes: the engine's share of a delivered alert, without the alert's work.
 */
export async function floorWorkflow({
  local: asLocal,
}: {
  local: boolean;
  /** Carried, not read: the input an alert's start sends. */
  asAlert?: AlertInput;
}): Promise<void> {
  await (asLocal ? local : remote).doNothing();
}
