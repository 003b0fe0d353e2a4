import { authOperations } from './accounts/auth.routes';
import { settingsOperations } from './accounts/settings.routes';
import { usersOperations } from './accounts/users.routes';
import { agentOperations } from './agent/agent.routes';
import { channelOperations } from './alerts/channels.routes';
import { auditOperations } from './audit/audit.routes';
import { canaryOperations } from './canaries/canaries.routes';
import { threatOperations } from './canaries/threats.routes';
import { tripwireOperations } from './canaries/tripwire.routes';
import { workerPingOperations } from './diagnostics/worker-ping.routes';
import { consoleEvidenceOperations } from './evidence/console-evidence.routes';
import { evidenceOperations } from './evidence/evidence.routes';
import { logOperations } from './evidence/log.routes';
import { publicVerifyOperations } from './evidence/public-verify.routes';
import { healthOperations } from './health/health.routes';
import { honeypotOperations } from './honeypot/honeypot.routes';
import type { DepsOf } from './http/operation';
import { apiKeysOperations } from './keys/api-keys.routes';
import { usageOperations } from './metering/usage.routes';
import { metricsOperations } from './metrics';
import { referenceOperations } from './openapi/reference.routes';
import { ragOperations } from './rag/rag.routes';
import { shieldOperations } from './shield/shield.routes';

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
  audit: auditOperations,
  consoleEvidence: consoleEvidenceOperations,
  evidence: evidenceOperations,
  publicVerify: publicVerifyOperations,
  log: logOperations,
  shield: shieldOperations,
  honeypot: honeypotOperations,
  rag: ragOperations,
  agent: agentOperations,
  workerPing: workerPingOperations,
} as const;

export type ApiDeps = { [K in keyof typeof API]: DepsOf<(typeof API)[K]> };

export const API_OPERATIONS = Object.values(API).flat();
