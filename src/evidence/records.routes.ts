import { z } from 'zod';
import { callerAccountId, callerOf } from '../auth/caller';
import { sessionOf } from '../auth/session-auth';
import { operationsFor } from '../http/operation';
import { continueBelow, DEPRECATED_SEQ_QUERY, seqCursor, seqPageQuery } from '../http/pagination';
import { refuseEvidenceDeletion } from './evidence-protection';
import { exportedRecord, exportedRecordView } from './evidence-record.view';
import type { EvidenceRepository } from './evidence.repository';
import { recordVerificationView, type EvidenceService } from './evidence.service';

export const evidencePageView = z
  .object({
    records: z.array(exportedRecordView),
    next_cursor: z.string().nullable(),
    /** Deprecated: the `seq` for `before`; use `next_cursor`. */
    next_before: z.number().int().nullable().meta({ deprecated: true }),
  })
  .meta({ id: 'EvidenceRecordPage' });

export interface RecordsDeps {
  evidence: EvidenceRepository;
  service: EvidenceService;
}
const operation = operationsFor<RecordsDeps>('Evidence');

/**
 * The sealed records: re-verify one (API key under /audit, session under /api/audit), page
 * through them (console), and the refusal to delete any.
 */
export const recordsOperations = [
  operation({
    operationId: 'verifyRecord',
    method: 'post',
    path: '/audit/verify/{log_id}',
    summary: 'Re-verify a sealed record',
    description:
      "Recomputes the record's hash; `inclusion` is the RFC 9162 proof against a signed checkpoint (one is signed if none covers it yet).",
    auth: 'apiKey',
    success: { status: 200, description: 'The verification' },
    response: recordVerificationView,
    handler: async ({ params, res }, { service }) =>
      service.verify(callerAccountId(res), params.log_id!),
  }),
  operation({
    operationId: 'verifyRecordFromConsole',
    method: 'post',
    path: '/api/audit/records/{log_id}/verify',
    summary: "Recompute one record's hash (console)",
    auth: 'session',
    success: { status: 200, description: 'The verification' },
    response: recordVerificationView,
    handler: async ({ params, res }, { service }) =>
      service.verify(sessionOf(res).userId, params.log_id!),
  }),
  operation({
    operationId: 'listEvidenceRecords',
    method: 'get',
    path: '/api/audit/records',
    summary: 'The sealed log, newest first (console)',
    auth: 'session',
    query: seqPageQuery,
    deprecatedQuery: DEPRECATED_SEQ_QUERY,
    success: { status: 200, description: '`{records, next_cursor}`' },
    response: evidencePageView,
    handler: async ({ query, res }, { evidence }) => {
      const { records, nextBefore } = await evidence.pageNewestFirst(sessionOf(res).userId, {
        limit: query.limit,
        beforeSeq: continueBelow(query),
      });
      const openings = await Promise.all(records.map((record) => evidence.openings(record)));
      return {
        records: records.map((record, i) => exportedRecord(record, openings[i])),
        next_cursor: seqCursor(nextBefore),
        next_before: nextBefore,
      };
    },
  }),
  operation({
    operationId: 'deleteEvidence',
    method: 'delete',
    path: '/audit/{log_id}',
    expressPath: ['/audit/{*path}'],
    summary: 'Never allowed: no API key can delete evidence',
    description: 'No route deletes evidence at all.',
    auth: 'apiKey',
    success: { status: 403, description: 'Always refused' },
    handler: ({ res }) => refuseEvidenceDeletion(callerOf(res)),
  }),
];
