import { Router } from 'express';
import { z } from 'zod';
import { AppError } from '../http/errors';
import { parseQuery } from '../http/validate';
import { consistencyView, describeCheckpoint, type EvidenceLog } from './evidence-log';

const size = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
export const consistencyQuery = z.object({ from: size, to: size });

/**
 * `/api/log`, public: the Merkle log's signed checkpoints, its public key, and consistency
 * proofs, so anyone holding an earlier checkpoint can check that the log only grew.
 */
export function logRoutes(log: EvidenceLog): Router {
  const router = Router();

  /** The latest checkpoint as the signed note itself (text/plain, as tlog clients fetch it). */
  router.get('/checkpoint', async (_req, res) => {
    const latest = await log.checkpoints.latest();
    if (!latest) throw new AppError(404, 'No checkpoint has been signed yet: the log is empty');
    res.set('Cache-Control', 'no-store').type('text/plain').send(latest.note);
  });

  router.get('/checkpoints/:size', async (req, res) => {
    const parsed = size.safeParse(req.params.size);
    if (!parsed.success) throw new AppError(422, 'size: a tree size of at least 1');
    const checkpoint = await log.checkpoints.bySize(parsed.data);
    if (!checkpoint) throw new AppError(404, `No checkpoint was signed at size ${parsed.data}`);
    res.json(describeCheckpoint(checkpoint));
  });

  router.get('/public-key', (_req, res) => {
    res.json(log.publicKey());
  });

  router.get('/consistency', async (req, res) => {
    const { from, to } = parseQuery(consistencyQuery, req.query);
    res.json((await log.consistency(from, to)) satisfies z.output<typeof consistencyView>);
  });

  return router;
}
