import { authOperations } from './accounts/auth.routes';
import { settingsOperations } from './accounts/settings.routes';
import { usersOperations } from './accounts/users.routes';
import { agentOperations } from './agent/agent.routes';
import { channelOperations } from './alerts/channels.routes';
import { canaryOperations } from './canaries/canaries.routes';
import { threatOperations } from './canaries/threats.routes';
import { tripwireOperations } from './canaries/tripwire.routes';
import { adminOperations } from './admin/admin.routes';
import { privacyOperations } from './privacy/privacy.routes';
import { communityOperations } from './community/community.routes';
import { dashboardOperations } from './dashboard/dashboard.routes';
import { workerPingOperations } from './diagnostics/worker-ping.routes';
import { chainsOperations } from './evidence/chains.routes';
import { exportsOperations } from './evidence/export/exports.routes';
import { hashesOperations } from './evidence/hashes.routes';
import { logOperations } from './evidence/log/log.routes';
import { tilesOperations } from './evidence/log/tiles.routes';
import { recordsOperations } from './evidence/records.routes';
import { trailOperations } from './evidence/trail/trail.routes';
import { healthOperations } from './health/health.routes';
import { honeypotOperations } from './honeypot/honeypot.routes';
import type { DepsOf } from './http/operation';
import { apiKeysOperations } from './keys/api-keys.routes';
import { usageOperations } from './metering/usage.routes';
import { metricsOperations } from './metrics';
import { referenceOperations } from './openapi/reference.routes';
import { ragOperations } from './rag/rag.routes';
import { shieldOperations } from './shield/shield.routes';
import { weeklyOperations } from './weekly/weekly.routes';
import { workflowRunOperations } from './workflow-runs/workflow-runs.routes';

/**
 * Every operation the API serves, by route file, in the order of the reference. app.ts binds each
 * group to its dependencies and mounts it; the OpenAPI document and docs/api.md are built from it.
 */
export const API = {
  health: healthOperations,
  metrics: metricsOperations,
  reference: referenceOperations,
  auth: authOperations,
  users: usersOperations,
  settings: settingsOperations,
  usage: usageOperations,
  apiKeys: apiKeysOperations,
  canaries: canaryOperations,
  threats: threatOperations,
  tripwires: tripwireOperations,
  channels: channelOperations,
  trail: trailOperations,
  records: recordsOperations,
  exports: exportsOperations,
  chains: chainsOperations,
  hashes: hashesOperations,
  log: logOperations,
  tiles: tilesOperations,
  shield: shieldOperations,
  honeypot: honeypotOperations,
  rag: ragOperations,
  agent: agentOperations,
  workerPing: workerPingOperations,
  workflowRuns: workflowRunOperations,
  dashboard: dashboardOperations,
  weekly: weeklyOperations,
  community: communityOperations,
  admin: adminOperations,
  privacy: privacyOperations,
} as const;

export type ApiDeps = { [K in keyof typeof API]: DepsOf<(typeof API)[K]> };

export const API_OPERATIONS = Object.values(API).flat();
