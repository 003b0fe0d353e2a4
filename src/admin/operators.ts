import type { RequestHandler } from 'express';
import { isOperator, type UsersRepository } from '../accounts/users.repository';
import { callerAccountId } from '../auth/caller';
import { DomainError } from '../errors';

export const NOT_AN_OPERATOR = 'Only operator accounts may use the admin API';

/**
 * Lets only operator accounts through, whatever the credential's scopes (a `*` key of any other
 * account is refused too). Read fresh on every request: a role taken away counts at once.
 */
export function requireOperator(users: UsersRepository): RequestHandler {
  return async (_req, res, next) => {
    if (!isOperator(await users.findById(callerAccountId(res)))) {
      throw new DomainError('forbidden', NOT_AN_OPERATOR);
    }
    next();
  };
}

/** Scopes of the `admin` namespace (`admin:*`, `admin:anything`): only operators' keys hold them. */
export const adminScopes = (scopes: readonly string[]) =>
  scopes.filter((scope) => scope === 'admin' || scope.startsWith('admin:'));
