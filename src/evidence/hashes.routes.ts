import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { z } from 'zod';
import { DomainError } from '../errors';
import { operationsFor } from '../http/operation';
import { hashCheckView, type EvidenceService } from './evidence.service';

const hashParam = z
  .string()
  .regex(/^[0-9a-f]{64}$/i, 'a SHA-256 content hash: 64 hexadecimal digits');

/** Probes per client address and minute; each API replica counts on its own. */
export const HASH_CHECKS_PER_MINUTE = 60;

/** Probes per client address and minute, answered 429 beyond. */
function hashCheckLimiter(): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit: HASH_CHECKS_PER_MINUTE,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    handler: (_req, _res, _next, options) => {
      const seconds = Math.ceil(options.windowMs / 1000);
      throw new DomainError(
        'rate_limited',
        {
          error: 'rate_limited',
          message: `At most ${HASH_CHECKS_PER_MINUTE} hash checks a minute from one address`,
          retry_after_seconds: seconds,
        },
        seconds,
      );
    },
  });
}

export interface HashesDeps {
  service: EvidenceService;
  /** One limiter per app, so its counts are the app's own. */
  limiter: RequestHandler;
}
const operation = operationsFor<HashesDeps>('Evidence');

/** `GET /api/verify/<hash>`: anyone can check a content hash, without an account. */
export const hashesOperations = [
  operation({
    operationId: 'checkHash',
    method: 'get',
    path: '/api/verify/{hash}',
    summary: 'Public hash check',
    description: 'Never content, owner or ids. 60 checks a minute per address and API replica.',
    auth: 'none',
    before: ({ limiter }) => [limiter],
    success: {
      status: 200,
      description:
        '`{content_hash, exists, intact, sealed_at, algorithm, leaf_index, inclusion}`: inclusion is the RFC 9162 proof against the latest signed checkpoint (null until one covers the record)',
    },
    response: hashCheckView,
    errors: { 422: 'Not a SHA-256 hex digest', 429: 'Too many checks' },
    handler: async ({ params, res }, { service }) => {
      const hash = hashParam.safeParse(params.hash);
      if (!hash.success) throw new DomainError('invalid', `hash: ${hash.error.issues[0]?.message}`);
      res.set('Cache-Control', 'no-store');
      return service.publicCheck(hash.data.toLowerCase());
    },
  }),
];

export const hashesDeps = (service: EvidenceService): HashesDeps => ({
  service,
  limiter: hashCheckLimiter(),
});
