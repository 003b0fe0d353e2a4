import { ZodError, type ZodType, type z } from 'zod';
import { DomainError } from '../errors';
import { describeZodError } from './errors';

/** A JSON body checked against its schema; a problem is 422 naming `body.<field>`. */
export function parseBody<T extends ZodType>(schema: T, body: unknown): z.output<T> {
  try {
    return schema.parse(body);
  } catch (err) {
    if (err instanceof ZodError) throw new DomainError('invalid', describeZodError(err, 'body'));
    throw err;
  }
}

/**
 * A query string checked against its schema; a problem is 422 naming `query.<name>`. A parameter
 * given more than once is refused by name rather than handed to the schema as a list.
 */
export function parseQuery<T extends ZodType>(schema: T, query: unknown): z.output<T> {
  const fields = (query ?? {}) as Record<string, unknown>;
  const repeated = Object.keys(fields).filter((name) => Array.isArray(fields[name]));
  if (repeated.length) {
    throw new DomainError(
      'invalid',
      repeated.map((name) => `query.${name}: given more than once`).join('; '),
    );
  }
  try {
    return schema.parse(fields);
  } catch (err) {
    if (err instanceof ZodError) throw new DomainError('invalid', describeZodError(err, 'query'));
    throw err;
  }
}
