import type { RequestHandler } from 'express';
import { DomainError } from '../errors';

/**
 * Every body this API reads is JSON: a body of another type is refused with 415 before any route
 * runs, rather than left unparsed for the route to report as missing fields. Requests without a
 * body (no length, or zero) pass whatever their Content-Type.
 */
export const jsonBodiesOnly: RequestHandler = (req, _res, next) => {
  const length = req.get('content-length');
  const hasBody = req.get('transfer-encoding') !== undefined || Number(length ?? 0) > 0;
  if (hasBody && !req.is('application/json')) {
    const type = req.get('content-type') ?? 'none';
    throw new DomainError(
      'unsupported_media_type',
      `body: must be JSON (Content-Type: application/json), not ${type}`,
    );
  }
  next();
};
