import type { Request, RequestHandler } from 'express';
import { httpRequestDuration } from '../metrics';

const templates = new WeakMap<Request, () => string>();

/**
 * The route template that handled this request (`/api/canaries/:canary_id`), or `unmatched`. It is
 * taken when the router stores the matched route on `req.route`, while `req.baseUrl` still holds the
 * router's mount path: once an error leaves the router, Express has already reset `baseUrl`, so
 * reading it at the end labelled a 429 `/inspect` and the 200 of the same route `/shield/inspect`.
 */
export function routeTemplateOf(req: Request): () => string {
  const known = templates.get(req);
  if (known) return known;
  let route: unknown;
  let template = 'unmatched';
  Object.defineProperty(req, 'route', {
    configurable: true,
    enumerable: true,
    get: () => route,
    set(matched: { path: string }) {
      route = matched;
      template = `${req.baseUrl}${matched.path}`;
    },
  });
  const read = () => template;
  templates.set(req, read);
  return read;
}

/**
 * Times every request and labels it with its route template, never the raw path, so ids do not
 * multiply the series, and a route's errors carry the same label as its successes.
 */
export const requestMetrics: RequestHandler = (req, res, next) => {
  const end = httpRequestDuration.startTimer({ method: req.method });
  const template = routeTemplateOf(req);
  res.once('finish', () => end({ route: template(), status: String(res.statusCode) }));
  next();
};
