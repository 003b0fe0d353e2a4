import { DeliveryTargets } from '../src/alerts/delivery-targets';
import { EvidenceStore } from '../src/evidence/evidence.store';
import { agentWatchActivities } from './agent-watch.activities';
import { alertDeliveryActivities, type AlertDeliveryDeps } from './alert-delivery.activities';
import { threatAlertActivities, type ThreatAlertDeps } from './threat-alert.activities';
import { workerPingActivities } from './worker-ping.activities';

export type ActivityDeps = Omit<AlertDeliveryDeps & ThreatAlertDeps, 'evidence' | 'targets'>;

/** Activities are thin I/O adapters; workflows see only this type. */
export function createActivities(settings: ActivityDeps) {
  // One store per worker, so every evidence append of an account shares one group commit.
  const deps = {
    ...settings,
    evidence: new EvidenceStore(settings.db, () => new Date()),
    targets: new DeliveryTargets(settings.db, settings.builtIns),
  };
  return {
    ...workerPingActivities(deps),
    ...alertDeliveryActivities(deps),
    ...threatAlertActivities(deps),
    ...agentWatchActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
