import type { Request, RequestHandler } from 'express';
import type { AuditTrailWriter } from '../evidence/trail/audit-trail.writer';
import type { Clock } from '../clock';
import type { ApiKeysService } from '../keys/api-keys.service';
import { requiredScope, scopesGrant } from '../keys/scopes';
import { DomainError } from '../errors';
import { requestIdOf } from '../http/request-id';
import './caller';

/** Told about every refused credential (canary tripwires); awaited before the refusal. */
export type RefusedCredential = (
  req: Request,
  via: 'api_key' | 'bearer_token' | 'password' | 'basic_auth' | 'aws_signature',
  candidates: (string | undefined)[],
) => Promise<void>;

interface ApiKeyLayerDeps {
  keys: ApiKeysService;
  trail: AuditTrailWriter;
  clock: Clock;
  refused: RefusedCredential;
}

/**
 * For every request that carries `X-API-Key`: authenticate the key (401 otherwise), record the
 * request in the account's audit trail once answered, and refuse it with 403 when the key lacks the
 * scope the spec's table requires for this path and method. Requests without the header pass on.
 */
export function apiKeyLayer({ keys, trail, clock, refused }: ApiKeyLayerDeps): RequestHandler {
  return async (req, res, next) => {
    const value = req.get('x-api-key');
    if (value === undefined) return next();
    const principal = await keys.authenticate(value);
    if (!principal) {
      await refused(req, 'api_key', [value]);
      throw new DomainError('unauthenticated', 'Invalid or revoked API key');
    }
    res.locals.apiKey = principal;
    req.log = req.log.child({ accountId: principal.accountId, keyId: principal.keyId });

    const at = clock();
    res.once('finish', () => {
      trail.record({
        accountId: principal.accountId,
        at,
        action: 'api_key.used',
        actor: { type: 'api_key', id: principal.keyId },
        keyId: principal.keyId,
        request: {
          method: req.method,
          path: req.originalUrl.split('?')[0] ?? '',
          status: res.statusCode,
          requestId: requestIdOf(req),
        },
      });
    });

    const scope = requiredScope(req.method, req.path);
    if (scope && !scopesGrant(principal.scopes, scope)) {
      throw new DomainError('forbidden', `The API key does not have the required scope: ${scope}`);
    }
    next();
  };
}

/** Product routes: only an API key authenticates here. */
export const requireApiKey: RequestHandler = (req, res, next) => {
  if (!res.locals.apiKey) {
    throw new DomainError('unauthenticated', 'Missing API key: send X-API-Key: <API_KEY>');
  }
  next();
};
