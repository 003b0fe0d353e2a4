import { Router } from 'express';
import { z } from 'zod';
import { sessionOf } from '../http/session-auth';
import type { AuditEntry, AuditTrailRepository } from './audit-trail.repository';

const pageSchema = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z
    .string()
    .regex(/^aud_[0-9a-f]{28}$/, 'a cursor from the previous page')
    .optional(),
});

function describeEntry(entry: AuditEntry) {
  return {
    id: entry.id,
    at: entry.at.toISOString(),
    action: entry.action,
    actor: entry.actor,
    key_id: entry.keyId,
    ...(entry.request && {
      request: {
        method: entry.request.method,
        path: entry.request.path,
        status: entry.request.status,
        request_id: entry.request.requestId,
      },
    }),
  };
}

/** `GET /api/audit/trail`: the account's audit trail, newest first, behind requireSession. */
export function auditRoutes(audit: AuditTrailRepository): Router {
  const router = Router();

  router.get('/trail', async (req, res) => {
    const { limit, before } = pageSchema.parse(req.query);
    const page = await audit.listNewestFirst(sessionOf(res).userId, limit, before);
    res.json({ entries: page.entries.map(describeEntry), next: page.next });
  });

  return router;
}
