import { Router } from 'express';
import { z } from 'zod';
import type { UsersRepository } from '../accounts/users.repository';
import type { Clock } from '../clock';
import { requireApiKey } from '../http/api-key-auth';
import { callerAccountId, ownAccountOnly } from '../http/caller';
import { sendExport } from './evidence-export';
import { refuseEvidenceDeletionByApiKey } from './evidence-protection';
import type { EvidenceLog } from './evidence-log';
import type { EvidenceRepository } from './evidence.repository';
import type { EvidenceService } from './evidence.service';
import { parseQuery } from '../http/validate';

export const exportQuery = z.object({ format: z.enum(['json', 'pdf']).optional() });

interface EvidenceRoutesDeps {
  evidence: EvidenceRepository;
  service: EvidenceService;
  users: UsersRepository;
  log: EvidenceLog;
  clock: Clock;
}

/** The `/audit` product area: verify a record, export the log, check the chain (API key). */
export function evidenceRoutes({
  evidence,
  service,
  users,
  log,
  clock,
}: EvidenceRoutesDeps): Router {
  const router = Router();
  router.use(requireApiKey);
  router.delete('/{*path}', refuseEvidenceDeletionByApiKey);

  router.post('/verify/:log_id', async (req, res) => {
    res.json(await service.verify(callerAccountId(res), req.params.log_id));
  });

  router.get('/chain/:user_id', ownAccountOnly, async (_req, res) => {
    res.json(await service.checkChain(callerAccountId(res)));
  });

  router.get('/export/:user_id', ownAccountOnly, async (req, res) => {
    const { format } = parseQuery(exportQuery, req.query);
    await sendExport(req, res, { evidence, users, log, now: clock }, callerAccountId(res), format);
  });

  return router;
}
