import { pinoHttp } from 'pino-http';
import type { Logger } from '../logger';
import { assignRequestId } from './request-id';

const PROBES = new Set(['/healthz', '/readyz']);

/** One line per request, tagged with the request id that every later log line of it carries. */
export function requestLogging(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: assignRequestId,
    autoLogging: { ignore: (req) => PROBES.has(req.url ?? '') },
    serializers: {
      req: (req: { id: unknown; method: string; url: string }) => ({
        id: req.id,
        method: req.method,
        url: req.url,
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    customLogLevel: (_req, res, err) =>
      err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
    // The line reads as the request: `GET /api/canaries 200 12 ms`.
    customSuccessMessage: (req, res, ms) => `${req.method} ${req.url} ${res.statusCode} ${ms} ms`,
    customErrorMessage: (req, res, err) =>
      `${req.method} ${req.url} ${res.statusCode} ${err.message}`,
  });
}
