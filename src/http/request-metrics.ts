import type { RequestHandler } from 'express';
import { httpRequestDuration } from '../metrics';

/**
 * Times every request and labels it with its route template (`/api/canaries/:canary_id`), never
 * the raw path, so ids do not multiply the series; unmatched paths share one label.
 */
export const requestMetrics: RequestHandler = (req, res, next) => {
  const end = httpRequestDuration.startTimer({ method: req.method });
  res.once('finish', () => {
    const matched = req.route as { path: string } | undefined;
    const route = matched ? `${req.baseUrl}${matched.path}` : 'unmatched';
    end({ route, status: String(res.statusCode) });
  });
  next();
};
