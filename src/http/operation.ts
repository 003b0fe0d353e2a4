import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import type { z, ZodType } from 'zod';
import { parseBody, parseQuery } from './validate';

/** How an operation authenticates (the spec's scope table adds the API key's scope). */
export type Auth = 'none' | 'session' | 'apiKey' | 'sessionOrApiKey' | 'refreshCookie';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** What a handler gets: the validated body and query, and the request for what is left. */
export interface OperationInput<Body, Query> {
  body: Body;
  query: Query;
  params: Record<string, string>;
  req: Request;
  res: Response;
}

/** An answer of its own besides the common ones: a `{detail}` error, or a body of its own. */
export type OperationError = string | { description: string; response: ZodType };

/**
 * One HTTP operation: everything the router, the OpenAPI document and the reference pages need.
 * `D` is what the handler needs from the composition root (app.ts binds it).
 */
export interface Operation<
  D = unknown,
  B extends ZodType = ZodType<undefined>,
  Q extends ZodType = ZodType<undefined>,
  R extends ZodType = ZodType<never>,
> {
  /** Unique, camelCase: SDK generators name their methods after it. */
  operationId: string;
  method: Method;
  /** OpenAPI form: `/api/canaries/{canary_id}`. */
  path: string;
  /** Where Express matches it when that is wider than `path` (catch-alls). */
  expressPath?: string[];
  /** Any method matches (the decoy endpoints answer whatever a client sends). */
  anyMethod?: true;
  summary: string;
  description?: string;
  tags: string[];
  auth: Auth;
  /**
   * Served before the API key layer (app.ts), so a bad `X-API-Key` is not read; every other
   * route, public ones included, refuses it with 401.
   */
  beforeKeyLayer?: true;
  /** The JSON body, validated (422 `body.<field>`) before anything else runs. */
  body?: B;
  /** A body may be left out; the schema then sees `{}`. */
  bodyOptional?: true;
  /** The query string, validated (422 `query.<name>`). */
  query?: Q;
  /** Query parameters still accepted but deprecated (documented so). */
  deprecatedQuery?: readonly string[];
  /** Runs after authentication, before validation: refusals that come before any look at the input. */
  authorize?: RequestHandler[];
  /** Runs after authentication and validation, before the handler (metering). */
  before?(deps: D): RequestHandler[];
  /** Success status and what it answers; errors are added from the auth and the inputs. */
  success: { status: number; description: string; contentType?: string };
  /** The success body of a JSON operation, as the handler builds it (never parsed at runtime). */
  response?: R;
  /** Further statuses this operation answers besides the common ones. */
  errors?: Record<number, OperationError>;
  /** Examples for the document: a request body and a success body. */
  examples?: { body?: z.input<B>; response?: z.output<R> };
  /**
   * Returns the success body (sent as JSON with `success.status`), or nothing when it answered
   * through `res` itself (a stream, a text body, a status of its own); a 204 is sent for it.
   */
  handler(
    input: OperationInput<z.output<B>, z.output<Q>>,
    deps: D,
  ): Promise<z.output<R> | void> | z.output<R> | void;
}

/** Any operation: handlers are methods, so one taking a narrower body still fits here. */
export type AnyOperation<D = unknown> = Operation<D, ZodType, ZodType, ZodType>;

/**
 * `const operation = operationsFor<Deps>('Canaries')` in a route file: each `operation({...})`
 * infers its own body, query and answer types, and is tagged with the file's tag.
 */
export function operationsFor<D>(tag: string) {
  return <
    B extends ZodType = ZodType<undefined>,
    Q extends ZodType = ZodType<undefined>,
    R extends ZodType = ZodType<never>,
  >(
    op: Omit<Operation<D, B, Q, R>, 'tags'> & { tags?: string[] },
  ): AnyOperation<D> => ({ ...op, tags: op.tags ?? [tag] });
}

/** An operation and the dependencies its handler runs with. */
export interface BoundOperation {
  op: AnyOperation;
  deps: unknown;
}

export type DepsOf<T> = T extends readonly AnyOperation<infer D>[] ? D : never;

export function bind<D>(ops: readonly AnyOperation<D>[], deps: D): BoundOperation[] {
  return ops.map((op) => ({ op, deps }));
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Locals {
      /** The operation's validated body and query, for its handler. */
      input?: { body: unknown; query: unknown };
    }
  }
}

function validate(op: AnyOperation): RequestHandler {
  return (req, res, next) => {
    const rawBody: unknown = req.body;
    res.locals.input = {
      body: op.body
        ? parseBody(op.body, rawBody === undefined && op.bodyOptional ? {} : rawBody)
        : undefined,
      query: op.query ? parseQuery(op.query, req.query) : undefined,
    };
    next();
  };
}

function run({ op, deps }: BoundOperation): RequestHandler {
  return async (req: Request, res: Response, _next: NextFunction) => {
    const { body, query }: { body: unknown; query: unknown } = res.locals.input ?? {
      body: undefined,
      query: undefined,
    };
    const answer: unknown = await op.handler(
      { body, query, params: req.params as Record<string, string>, req, res },
      deps,
    );
    if (answer !== undefined) res.status(op.success.status).json(answer);
    else if (!res.headersSent && op.success.status === 204) res.status(204).end();
  };
}

/** Express path(s) of an operation: `{name}` becomes `:name` unless it says otherwise. */
export function expressPaths(op: AnyOperation): string[] {
  return op.expressPath ?? [op.path.replace(/\{(\w+)\}/g, ':$1')];
}

/**
 * Mounts each operation: its authentication and authorization, then validation, then its own
 * middleware, then the handler. `authenticate` says what each kind of authentication runs.
 */
export function mountOperations(
  router: Router,
  operations: readonly BoundOperation[],
  authenticate: Record<Auth, RequestHandler[]>,
): void {
  for (const bound of operations) {
    const { op, deps } = bound;
    const chain = [
      ...authenticate[op.auth],
      ...(op.authorize ?? []),
      validate(op),
      ...(op.before?.(deps) ?? []),
      run(bound),
    ];
    const paths = expressPaths(op);
    if (op.anyMethod) router.all(paths, ...chain);
    else router[op.method](paths, ...chain);
  }
}

/** Binds every group of operations to its dependencies, in the groups' order. */
export function bindAll<G extends Record<string, readonly AnyOperation[]>>(
  groups: G,
  deps: { [K in keyof G]: DepsOf<G[K]> },
): BoundOperation[] {
  return Object.keys(groups).flatMap((name) => bind(groups[name]!, deps[name]));
}
