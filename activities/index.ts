import { agentWatchActivities } from './agent-watch.activities';
import { alertDeliveryActivities, type AlertDeliveryDeps } from './alert-delivery.activities';
import { threatAlertActivities, type ThreatAlertDeps } from './threat-alert.activities';
import { workerPingActivities } from './worker-ping.activities';

export type ActivityDeps = AlertDeliveryDeps & ThreatAlertDeps;

/** Activities are thin I/O adapters; workflows see only this type. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...workerPingActivities(deps),
    ...alertDeliveryActivities(deps),
    ...threatAlertActivities(deps),
    ...agentWatchActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
