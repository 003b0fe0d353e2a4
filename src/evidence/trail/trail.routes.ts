import { z } from 'zod';
import type { EvidenceRecord } from '../evidence.repository';
import { operationsFor } from '../../http/operation';
import {
  continueBelow,
  DEPRECATED_SEQ_QUERY,
  seqCursor,
  seqPageQuery,
} from '../../http/pagination';
import { sessionOf } from '../../auth/session-auth';
import {
  channelDisabledData,
  deliveryOutcomeData,
  KEY_AUDIT_ACTIONS,
  keyAuditData,
  type AuditTrail,
} from './audit-trail';

const entryBase = {
  log_id: z.string(),
  seq: z.number().int(),
  content_hash: z.string().nullable(),
};
/** An audit record with its sealed data spread in, by what happened. */
export const auditEntryView = z.discriminatedUnion('action', [
  keyAuditData.extend({ ...entryBase, action: z.enum(KEY_AUDIT_ACTIONS) }),
  deliveryOutcomeData.extend({ ...entryBase, action: z.literal('delivery.outcome') }),
  channelDisabledData.extend({ ...entryBase, action: z.literal('channel.disabled') }),
]);
export const auditTrailView = z
  .object({
    entries: z.array(auditEntryView),
    next_cursor: z.string().nullable(),
    /** Deprecated: the `seq` for `before`; use `next_cursor`. */
    next: z.number().int().nullable().meta({ deprecated: true }),
  })
  .meta({ id: 'AuditTrailPage' });

/**
 * Records come back untyped from the log; their data was checked against `keyAuditData`,
 * `deliveryOutcomeData` and `channelDisabledData` when sealed (audit-trail.ts), so the cast holds for `audit.*` kinds.
 */
function describeEntry(record: EvidenceRecord): z.output<typeof auditEntryView> {
  return {
    log_id: record.id,
    seq: record.seq,
    action: record.kind.replace(/^audit\./, ''),
    ...record.data,
    content_hash: record.contentHash ?? null,
  } as z.output<typeof auditEntryView>;
}

const operation = operationsFor<AuditTrail>('Evidence');

/** The account's audit trail for the console, under /api/audit (session). */
export const trailOperations = [
  /** The account's audit trail, newest first. */
  operation({
    operationId: 'listAuditTrail',
    method: 'get',
    path: '/api/audit/trail',
    summary: 'Audit trail, newest first',
    description:
      'Key created, used (method, path, status, request id), revoked, delivery outcomes, and channels the service disabled; each entry is a sealed evidence record.',
    auth: 'session',
    query: seqPageQuery,
    deprecatedQuery: DEPRECATED_SEQ_QUERY,
    success: { status: 200, description: '`{entries, next_cursor}`' },
    response: auditTrailView,
    handler: async ({ query, res }, trail) => {
      const { records, nextBefore } = await trail.page(
        sessionOf(res).userId,
        query.limit,
        continueBelow(query),
      );
      return {
        entries: records.map(describeEntry),
        next_cursor: seqCursor(nextBefore),
        next: nextBefore,
      };
    },
  }),
];
