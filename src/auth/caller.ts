import type { RequestHandler, Response } from 'express';
import type { SessionPrincipal } from '../accounts/auth.service';
import { DomainError } from '../errors';

export interface ApiKeyPrincipal {
  keyId: string;
  accountId: string;
  scopes: string[];
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      session?: SessionPrincipal;
      apiKey?: ApiKeyPrincipal;
    }
  }
}

/** The account on whose behalf the request runs, however it authenticated. */
export function callerAccountId(res: Response): string {
  const accountId = res.locals.apiKey?.accountId ?? res.locals.session?.userId;
  if (!accountId) throw new Error('an authentication middleware must run before this handler');
  return accountId;
}

/**
 * For routes that name an account (path `:user_id` or body `user_id`): any account but the
 * caller's own is refused before the route does any work.
 */
export const ownAccountOnly: RequestHandler = (req, res, next) => {
  const caller = callerAccountId(res);
  const body: unknown = req.body;
  const named = [
    req.params.user_id,
    typeof body === 'object' && body !== null ? (body as { user_id?: unknown }).user_id : undefined,
  ].filter((id) => id !== undefined);
  if (named.some((id) => id !== caller)) {
    throw new DomainError(
      'forbidden',
      "user_id names another account: a call may only name the caller's own",
    );
  }
  next();
};

/**
 * What the ownership rule needs of a repository of owned records: the scoped read every route
 * uses, and one unscoped question asked only when that read finds nothing.
 */
export interface OwnedRecords<T> {
  /** The record when `accountId` owns it; another account's record is not found. */
  find(accountId: string, id: string): Promise<T | null>;
  /** The owning account of any record, or null: only to choose between 404 and 403. */
  ownerOf(id: string): Promise<string | null>;
}

/**
 * The one ownership rule for a resource named in a path: the caller's own record, else 404 when
 * it does not exist and 403 when another account owns it. `label` names it as the answer
 * should, e.g. `canary cnr_…`.
 */
export async function findOwned<T>(
  res: Response,
  records: OwnedRecords<T>,
  id: string,
  label: string,
): Promise<T> {
  const found = await records.find(callerAccountId(res), id);
  if (found) return found;
  if ((await records.ownerOf(id)) === null) throw new DomainError('not_found', `No ${label}`);
  throw new DomainError(
    'forbidden',
    `${label[0]!.toUpperCase()}${label.slice(1)} belongs to another account`,
  );
}

/** Who is calling, as services take it: a console session, or an API key with its scopes. */
export type Caller =
  | { type: 'session'; userId: string }
  | { type: 'api_key'; keyId: string; accountId: string; scopes: string[] };

/**
 * The caller of this request, for services that take it as a plain value. An API key wins over a
 * session token sent alongside it, as in `callerAccountId`: a key never borrows a session's rights.
 */
export function callerOf(res: Response): Caller {
  const { apiKey, session } = res.locals;
  if (apiKey) {
    const { keyId, accountId, scopes } = apiKey;
    return { type: 'api_key', keyId, accountId, scopes };
  }
  if (session) return { type: 'session', userId: session.userId };
  throw new Error('an authentication middleware must run before this handler');
}
