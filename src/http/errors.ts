import { isGrpcServiceError } from '@temporalio/client';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import {
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import { ZodError } from 'zod';
import { DomainError, type ErrorDetail, type ErrorKind } from '../errors';
import '../zod-messages';

export type { ErrorDetail };

/** The one place a domain error's kind becomes an HTTP status. */
const STATUS_OF_KIND: Record<ErrorKind, number> = {
  malformed: 400,
  invalid: 422,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  quota_exceeded: 402,
  rate_limited: 429,
  unavailable: 503,
  timed_out: 504,
};

/** What goes back to the client for an error it can act on. */
interface Answer {
  status: number;
  detail: ErrorDetail;
  headers: Record<string, string>;
}

function answerTo(err: DomainError): Answer {
  const headers: Record<string, string> =
    err.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(err.retryAfterSeconds) };
  return { status: STATUS_OF_KIND[err.kind], detail: err.detail, headers };
}

/** `body.scopes[3]`, `query.limit`: where in the request the value was. */
export function describePath(where: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (out, key) => (typeof key === 'number' ? `${out}[${key}]` : `${out}.${String(key)}`),
    where,
  );
}

/**
 * `"<where>.field.path: message"` for each issue, as clients read 422s field by field. A ZodError
 * that reaches the error handler unlabelled came from a body (query strings go through
 * `parseQuery`, which names them).
 */
export function describeZodError(err: ZodError, where = 'body'): string {
  return err.issues
    .map((issue) => `${describePath(where, issue.path)}: ${issue.message}`)
    .join('; ');
}

export const notFoundHandler: RequestHandler = (req) => {
  throw new DomainError('not_found', `No route for ${req.method} ${req.path}`);
};

interface BodyParserError {
  type: string;
  status?: number;
  limit?: number;
  message: string;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return (
    typeof err === 'object' && err !== null && typeof (err as BodyParserError).type === 'string'
  );
}

/** gRPC status codes of a Temporal frontend that did not answer. */
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_UNAVAILABLE = 14;

/** How long a client should wait before retrying a request that met an unavailable dependency. */
const RETRY_AFTER_SECONDS = 5;

/** The error, or the error it wraps, that says which dependency did not answer. */
function unavailableDependency(err: unknown): 'MongoDB' | 'Temporal' | null {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (
      e instanceof MongoServerSelectionError ||
      e instanceof MongoNetworkError ||
      e instanceof MongoNotConnectedError ||
      e instanceof MongoTopologyClosedError
    ) {
      return 'MongoDB';
    }
    if (isGrpcServiceError(e) && [GRPC_UNAVAILABLE, GRPC_DEADLINE_EXCEEDED].includes(+e.code)) {
      return 'Temporal';
    }
  }
  return null;
}

/** The domain error an error from a library or from Node amounts to, if it is the client's. */
function asDomainError(err: unknown): DomainError | undefined {
  if (err instanceof DomainError) return err;
  const dependency = unavailableDependency(err);
  if (dependency) {
    return new DomainError(
      'unavailable',
      {
        error: 'dependency_unavailable',
        dependency: dependency.toLowerCase(),
        message: `${dependency} is unavailable right now: retry shortly`,
      },
      RETRY_AFTER_SECONDS,
    );
  }
  if (err instanceof ZodError) return new DomainError('invalid', describeZodError(err));
  // The router could not decode a `%` sequence in a path parameter (`/r/%ZZ`): the client's fault.
  if (err instanceof URIError) {
    return new DomainError('malformed', 'path: malformed percent-encoding');
  }
  if (!isBodyParserError(err)) return undefined;
  switch (err.type) {
    case 'entity.verify.failed':
      return new DomainError('unsupported_media_type', `body: ${err.message}`);
    case 'entity.parse.failed':
      return new DomainError('invalid', `body: malformed JSON (${err.message})`);
    case 'entity.too.large':
      return new DomainError('too_large', `body: larger than the ${err.limit ?? ''} byte limit`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new DomainError('unsupported_media_type', `body: ${err.message}`);
    case 'request.aborted':
      return new DomainError('malformed', 'body: request aborted');
    default:
      return undefined;
  }
}

function answerFor(err: unknown): Answer | undefined {
  const domain = asDomainError(err);
  if (domain) return answerTo(domain);
  // Any other client error the body parser reports keeps the status it gave.
  if (isBodyParserError(err) && err.status && err.status < 500) {
    return { status: err.status, detail: err.message, headers: {} };
  }
  return undefined;
}

/** The single place errors become responses; internal messages and stacks never reach clients. */
export const errorHandler: ErrorRequestHandler = (err, req, res, _next) => {
  if (res.headersSent) {
    // A streamed answer (an export) failed part-way: cut the connection, so the client sees a
    // broken download rather than a short file that looks complete.
    req.log.warn({ err }, 'response failed after it began');
    res.destroy();
    return;
  }
  const answer = answerFor(err);
  if (!answer) {
    req.log.error({ err }, 'unhandled error');
    res.status(500).json({ detail: 'Internal server error' });
    return;
  }
  if (answer.status >= 500) req.log.warn({ err }, 'request failed');
  res.set(answer.headers).status(answer.status).json({ detail: answer.detail });
};
