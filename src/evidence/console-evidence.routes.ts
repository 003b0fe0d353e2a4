import { z } from 'zod';
import type { UsersRepository } from '../accounts/users.repository';
import type { Clock } from '../clock';
import { operationsFor } from '../http/operation';
import { continueBelow, DEPRECATED_SEQ_QUERY, seqCursor, seqPageQuery } from '../http/pagination';
import { sessionOf } from '../auth/session-auth';
import { evidenceExportView, exportEvidence } from './evidence-export';
import { exportedRecord, exportedRecordView } from './evidence-record.view';
import { exportFormat, exportQuery, sendFile } from './evidence.routes';
import type { EvidenceLog } from './evidence-log';
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

export interface ConsoleEvidenceDeps {
  evidence: EvidenceRepository;
  service: EvidenceService;
  users: UsersRepository;
  log: EvidenceLog;
  clock: Clock;
}
const operation = operationsFor<ConsoleEvidenceDeps>('Evidence');

/**
 * The evidence log for the console, under /api/audit (session): the `/audit` area's verify and
 * export (which take an API key there), and every record page by page.
 */
export const consoleEvidenceOperations = [
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
      return {
        records: records.map(exportedRecord),
        next_cursor: seqCursor(nextBefore),
        next_before: nextBefore,
      };
    },
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
    operationId: 'exportEvidenceFromConsole',
    method: 'get',
    path: '/api/audit/export',
    summary: 'Export the sealed log, JSON or PDF (console)',
    auth: 'session',
    query: exportQuery,
    success: { status: 200, description: 'The log' },
    response: evidenceExportView,
    errors: { 402: 'PDF needs a paid plan' },
    handler: async ({ query, req, res }, { evidence, users, log, clock }) => {
      const deps = { evidence, users, log, now: clock };
      const format = exportFormat(req, query.format);
      await sendFile(res, await exportEvidence(deps, sessionOf(res).userId, format));
    },
  }),
];
