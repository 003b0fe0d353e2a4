import { Router } from 'express';
import { rateLimit } from 'express-rate-limit';
import { z } from 'zod';
import { AppError } from '../http/errors';
import type { EvidenceService } from './evidence.service';

const hashParam = z
  .string()
  .regex(/^[0-9a-f]{64}$/i, 'a SHA-256 content hash: 64 hexadecimal digits');

/** Probes per client address and minute; each API replica counts on its own. */
export const PUBLIC_VERIFY_PER_MINUTE = 60;

/** `GET /api/verify/<hash>`: anyone can check a content hash, without an account. */
export function publicVerifyRoutes(service: EvidenceService): Router {
  const router = Router();
  const limiter = rateLimit({
    windowMs: 60_000,
    limit: PUBLIC_VERIFY_PER_MINUTE,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    handler: (_req, _res, _next, options) => {
      throw new AppError(
        429,
        {
          error: 'rate_limited',
          message: `At most ${PUBLIC_VERIFY_PER_MINUTE} hash checks a minute from one address`,
          retry_after_seconds: Math.ceil(options.windowMs / 1000),
        },
        { 'Retry-After': String(Math.ceil(options.windowMs / 1000)) },
      );
    },
  });

  router.get('/:hash', limiter, async (req, res) => {
    const hash = hashParam.safeParse(req.params.hash);
    if (!hash.success) throw new AppError(422, `hash: ${hash.error.issues[0]?.message}`);
    res.set('Cache-Control', 'no-store').json(await service.publicCheck(hash.data.toLowerCase()));
  });

  return router;
}
