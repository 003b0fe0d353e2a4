import { alertDeliveryActivities, type AlertDeliveryDeps } from './alert-delivery.activities';
import { workerPingActivities } from './worker-ping.activities';

export type ActivityDeps = AlertDeliveryDeps;

/** Activities are thin I/O adapters; workflows see only this type. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...workerPingActivities(deps),
    ...alertDeliveryActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
