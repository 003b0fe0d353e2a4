import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const REQUEST_ID_HEADER = 'X-Request-ID';

/** A caller's id is echoed only when it is a short token that is safe to log and to return. */
const SANE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export function isSaneRequestId(value: unknown): value is string {
  return typeof value === 'string' && SANE_ID.test(value);
}

/** pino-http's id generator: also sets the response header so every answer carries it. */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const offered = req.headers['x-request-id'];
  const id = isSaneRequestId(offered) ? offered : randomUUID();
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

/** The id assigned by `assignRequestId`, for passing on to workflows and activities. */
export function requestIdOf(req: IncomingMessage & { id?: unknown }): string {
  return typeof req.id === 'string' ? req.id : '';
}
