import { Router } from 'express';
import { z } from 'zod';
import type { UsersRepository } from '../accounts/users.repository';
import { pageSchema } from '../audit/audit.routes';
import type { Clock } from '../clock';
import { sessionOf } from '../http/session-auth';
import { sendExport } from './evidence-export';
import { exportedRecord, exportedRecordView } from './evidence-record.view';
import { exportQuery } from './evidence.routes';
import type { EvidenceLog } from './evidence-log';
import type { EvidenceRepository } from './evidence.repository';
import type { EvidenceService } from './evidence.service';
import { parseQuery } from '../http/validate';

export const evidencePageView = z.object({
  records: z.array(exportedRecordView),
  next_before: z.number().int().nullable(),
});

interface ConsoleEvidenceDeps {
  evidence: EvidenceRepository;
  service: EvidenceService;
  users: UsersRepository;
  log: EvidenceLog;
  clock: Clock;
}

/**
 * The evidence log for the console, under /api/audit behind requireSession: the `/audit` area's
 * verify and export (which take an API key there), and every record page by page.
 */
export function consoleEvidenceRoutes({
  evidence,
  service,
  users,
  log,
  clock,
}: ConsoleEvidenceDeps): Router {
  const router = Router();

  /** Newest first; `before` is the `seq` to continue below. */
  router.get('/records', async (req, res) => {
    const { limit, before } = parseQuery(pageSchema, req.query);
    const { records, nextBefore } = await evidence.pageNewestFirst(sessionOf(res).userId, {
      limit,
      beforeSeq: before,
    });
    res.json({
      records: records.map(exportedRecord),
      next_before: nextBefore,
    } satisfies z.output<typeof evidencePageView>);
  });

  router.get('/export', async (req, res) => {
    const { format } = parseQuery(exportQuery, req.query);
    await sendExport(req, res, { evidence, users, log, now: clock }, sessionOf(res).userId, format);
  });

  router.post('/records/:log_id/verify', async (req, res) => {
    res.json(await service.verify(sessionOf(res).userId, req.params.log_id));
  });

  return router;
}
