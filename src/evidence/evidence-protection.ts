import type { Caller } from '../auth/caller';
import { DomainError } from '../errors';

const REFUSAL =
  'Deleting evidence needs a signed-in console session: no API key can delete evidence, whatever its scopes';

/**
 * The one rule for removing evidence (a forced delete that takes recorded hits or leak records
 * with it): only a console session may, never an API key. Call before any such delete; the
 * session it returns is the one the removal is sealed under.
 */
export function evidenceRemover(caller: Caller): Extract<Caller, { type: 'session' }> {
  if (caller.type !== 'session') throw new DomainError('forbidden', REFUSAL);
  return caller;
}

/** Evidence itself has no delete route; with an API key the answer is a refusal, not a 404. */
export function refuseEvidenceDeletion(caller: Caller): never {
  evidenceRemover(caller);
  throw new DomainError('not_found', 'Evidence records cannot be deleted');
}
