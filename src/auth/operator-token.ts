import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { bearerToken } from './session-auth';
import { DomainError } from '../errors';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Operator-only routes (`/metrics`, `/docs`): with a token configured, only
 * `Authorization: Bearer <token>` passes; unset, the route stays open (keep it off the public
 * network then).
 */
export function operatorToken(token: string | undefined, variable: string): RequestHandler {
  if (!token) return (_req, _res, next) => next();
  const expected = digest(token);
  return (req, res, next) => {
    const offered = bearerToken(req.get('authorization'));
    // Digests have one length, so the comparison takes the same time whatever was sent.
    if (offered && timingSafeEqual(digest(offered), expected)) return next();
    // The challenge is HTTP's own; the refusal itself is the domain's.
    res.set('WWW-Authenticate', 'Bearer');
    throw new DomainError(
      'unauthenticated',
      `This route needs Authorization: Bearer <the ${variable} set on the server>`,
    );
  };
}
