import { callerAccountId, ownAccountOnly } from '../auth/caller';
import { sessionOf } from '../auth/session-auth';
import { operationsFor } from '../http/operation';
import { chainReportView, type EvidenceService } from './evidence.service';

const operation = operationsFor<EvidenceService>('Evidence');

/** The whole-log check of an account's hash chain: API key under /audit, session under /api/audit. */
export const chainsOperations = [
  operation({
    operationId: 'checkChain',
    method: 'get',
    path: '/audit/chain/{user_id}',
    summary: 'Whole-log chain check',
    description:
      'Checks the whole log up to the head read at its start; a gap a sealed `evidence.removed` record explains is in `removed_seqs`, not `missing_seqs`.',
    auth: 'apiKey',
    authorize: [ownAccountOnly],
    success: { status: 200, description: 'The check' },
    response: chainReportView,
    handler: async ({ res }, service) => service.checkChain(callerAccountId(res)),
  }),
  operation({
    operationId: 'checkChainFromConsole',
    method: 'get',
    path: '/api/audit/chain',
    summary: 'Whole-log chain check (console)',
    auth: 'session',
    success: { status: 200, description: 'The check' },
    response: chainReportView,
    handler: async ({ res }, service) => service.checkChain(sessionOf(res).userId),
  }),
];
