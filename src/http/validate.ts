import type { RequestHandler } from 'express';
import { ZodError, type ZodType, type z } from 'zod';
import { AppError, describeZodError } from './errors';

/** Validates (and replaces) the JSON body before later middleware runs; a ZodError becomes 422. */
export function validateBody(schema: ZodType): RequestHandler {
  return (req, _res, next) => {
    req.body = schema.parse(req.body);
    next();
  };
}

/**
 * A query string checked against its schema; a problem is 422 naming `query.<name>`. A parameter
 * given more than once is refused by name rather than handed to the schema as a list.
 */
export function parseQuery<T extends ZodType>(schema: T, query: unknown): z.output<T> {
  const fields = (query ?? {}) as Record<string, unknown>;
  const repeated = Object.keys(fields).filter((name) => Array.isArray(fields[name]));
  if (repeated.length) {
    throw new AppError(
      422,
      repeated.map((name) => `query.${name}: given more than once`).join('; '),
    );
  }
  try {
    return schema.parse(fields);
  } catch (err) {
    if (err instanceof ZodError) throw new AppError(422, describeZodError(err, 'query'));
    throw err;
  }
}
