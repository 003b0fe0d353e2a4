import type { Response } from 'express';
import { AppError } from '../http/errors';
import '../auth/caller';

const REFUSAL =
  'Deleting evidence needs a signed-in console session: no API key can delete evidence, whatever its scopes';

/**
 * The one rule for removing evidence (a forced delete that takes recorded hits or leak records
 * with it): only a console session may, never an API key. Call before any such delete.
 */
export function assertMayRemoveEvidence(res: Response): void {
  if (res.locals.apiKey || !res.locals.session) throw new AppError(403, REFUSAL);
}

/** Evidence itself has no delete route; with an API key the answer is a refusal, not a 404. */
export function refuseEvidenceDeletion(res: Response): never {
  assertMayRemoveEvidence(res);
  throw new AppError(404, 'Evidence records cannot be deleted');
}
