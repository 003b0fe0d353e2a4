import type { Db } from 'mongodb';
import { workerPingActivities } from './worker-ping.activities';

export interface ActivityDeps {
  db: Db;
}

/** Activities are thin I/O adapters; workflows see only this type. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...workerPingActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
