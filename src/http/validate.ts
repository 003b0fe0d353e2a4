import type { RequestHandler } from 'express';
import type { ZodType } from 'zod';

/** Validates (and replaces) the JSON body before later middleware runs; a ZodError becomes 422. */
export function validateBody(schema: ZodType): RequestHandler {
  return (req, _res, next) => {
    req.body = schema.parse(req.body);
    next();
  };
}
