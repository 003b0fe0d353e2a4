import type { RequestHandler, Response } from 'express';
import type { AuthService, SessionPrincipal } from '../accounts/auth.service';
import type { RefusedCredential } from './api-key-auth';
import './caller';
import { authorization } from './authorization';
import { DomainError } from '../errors';

/** The bearer token from `Authorization: Bearer <token>` (any letter case of the scheme). */
export function bearerToken(header: string | undefined): string | undefined {
  const parsed = authorization(header);
  if (parsed?.scheme !== 'bearer') return undefined;
  return /^[A-Za-z0-9_-]{16,128}$/.test(parsed.credentials) ? parsed.credentials : undefined;
}

/** Console routes: a session token is required and an API key is never accepted in its place. */
export function requireSession(auth: AuthService, refused: RefusedCredential): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('authorization');
    if (!header) {
      const hint = req.get('x-api-key') ? ' (API keys are not accepted on this route)' : '';
      throw new DomainError(
        'unauthenticated',
        `Missing session token: send Authorization: Bearer <token>${hint}`,
      );
    }
    const token = bearerToken(header);
    const principal = token && (await auth.authenticate(token));
    if (!principal) {
      await refused(req, 'bearer_token', [token]);
      throw new DomainError('unauthenticated', 'Invalid or expired session token');
    }
    res.locals.session = principal;
    req.log = req.log.child({ userId: principal.userId });
    next();
  };
}

export function sessionOf(res: Response): SessionPrincipal {
  const { session } = res.locals;
  if (!session) throw new Error('requireSession must run before this handler');
  return session;
}

/** Account routes open to both: an API key the key layer already checked, or a session token. */
export function requireSessionOrApiKey(
  auth: AuthService,
  refused: RefusedCredential,
): RequestHandler {
  const session = requireSession(auth, refused);
  return (req, res, next) => (res.locals.apiKey ? next() : session(req, res, next));
}
