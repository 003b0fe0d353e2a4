import { invitesIndexes } from '../accounts/invites.repository';
import { knownDevicesIndexes } from '../accounts/known-devices.repository';
import { loginFailuresIndexes } from '../accounts/login-failures.repository';
import { retiredRefreshesIndexes, sessionsIndexes } from '../accounts/sessions.repository';
import { usersIndexes } from '../accounts/users.repository';
import { apiKeysIndexes, keySlotsIndexes } from '../keys/api-keys.repository';
import { evidenceIndexes } from '../evidence/evidence.repository';
import { dataKeysIndexes } from '../evidence/data-keys';
import { checkpointsIndexes } from '../evidence/log/checkpoints';
import { signerLeaseIndexes } from '../evidence/log/signer-lease';
import { leavesIndexes } from '../evidence/log/log-leaves';
import { nodesIndexes } from '../evidence/log/log-tree';
import { channelsIndexes } from '../alerts/channels.repository';
import { deliveriesIndexes } from '../alerts/deliveries.repository';
import { canariesIndexes, canaryTokensIndexes } from '../canaries/canaries.repository';
import {
  threatEventsIndexes,
  threatHitsIndexes,
  threatStormsIndexes,
} from '../canaries/threats.repository';
import { agentsIndexes } from '../agent/agents.repository';
import { trapsIndexes } from '../honeypot/traps.repository';
import { ragDocumentsIndexes } from '../rag/documents.repository';
import { weeklySettingsIndexes } from '../weekly/weekly-settings.repository';
import type { CollectionIndexes } from './mongo';

/** Every index the service relies on; created at start, checked by /readyz. */
export const ALL_INDEXES: readonly CollectionIndexes[] = [
  usersIndexes,
  sessionsIndexes,
  retiredRefreshesIndexes,
  loginFailuresIndexes,
  knownDevicesIndexes,
  invitesIndexes,
  apiKeysIndexes,
  keySlotsIndexes,
  evidenceIndexes,
  dataKeysIndexes,
  leavesIndexes,
  nodesIndexes,
  checkpointsIndexes,
  signerLeaseIndexes,
  channelsIndexes,
  deliveriesIndexes,
  canariesIndexes,
  canaryTokensIndexes,
  threatEventsIndexes,
  threatHitsIndexes,
  threatStormsIndexes,
  trapsIndexes,
  ragDocumentsIndexes,
  agentsIndexes,
  weeklySettingsIndexes,
];
