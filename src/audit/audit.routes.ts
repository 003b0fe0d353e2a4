import { Router } from 'express';
import { z } from 'zod';
import type { EvidenceRecord } from '../evidence/evidence.repository';
import type { EvidenceService } from '../evidence/evidence.service';
import { sessionOf } from '../http/session-auth';
import {
  deliveryOutcomeData,
  KEY_AUDIT_ACTIONS,
  keyAuditData,
  type AuditTrail,
} from './audit-trail';
import { parseQuery } from '../http/validate';

export const pageSchema = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z.coerce.number().int().min(1).optional(),
});

const entryBase = {
  log_id: z.string(),
  seq: z.number().int(),
  content_hash: z.string().nullable(),
};
/** An audit record with its sealed data spread in, by what happened. */
export const auditEntryView = z.discriminatedUnion('action', [
  keyAuditData.extend({ ...entryBase, action: z.enum(KEY_AUDIT_ACTIONS) }),
  deliveryOutcomeData.extend({ ...entryBase, action: z.literal('delivery.outcome') }),
]);
export const auditTrailView = z.object({
  entries: z.array(auditEntryView),
  next: z.number().int().nullable(),
});

/**
 * Records come back untyped from the log; their data was checked against `keyAuditData` and
 * `deliveryOutcomeData` when sealed (audit-trail.ts), so the cast holds for `audit.*` kinds.
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

/** Console routes under /api/audit, behind requireSession. */
export function auditRoutes(trail: AuditTrail, evidence: EvidenceService): Router {
  const router = Router();

  /** The account's audit trail, newest first; `before` is the `seq` to continue below. */
  router.get('/trail', async (req, res) => {
    const { limit, before } = parseQuery(pageSchema, req.query);
    const { records, nextBefore } = await trail.page(sessionOf(res).userId, limit, before);
    res.json({
      entries: records.map(describeEntry),
      next: nextBefore,
    } satisfies z.output<typeof auditTrailView>);
  });

  /** The whole-log check of the account's evidence chain. */
  router.get('/chain', async (_req, res) => {
    res.json(await evidence.checkChain(sessionOf(res).userId));
  });

  return router;
}
