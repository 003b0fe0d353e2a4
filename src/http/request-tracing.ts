import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import { requestIdOf } from './request-id';
import { routeTemplateOf } from './request-metrics';

const tracer = trace.getTracer('tripwire-api');

/**
 * One server span per request, named by its route template like the metrics, continuing a caller's
 * `traceparent`; the handlers run in its context, so the workflow starts and signals they cause
 * (Temporal's client interceptor) join the same trace. A no-op while no tracer provider is
 * registered (see src/tracing.ts).
 */
export const requestTracing: RequestHandler = (req, res, next) => {
  const parent = propagation.extract(context.active(), req.headers);
  const span = tracer.startSpan(
    req.method,
    { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } },
    parent,
  );
  const template = routeTemplateOf(req);
  res.once('finish', () => {
    span.updateName(`${req.method} ${template()}`);
    span.setAttributes({
      'http.route': template(),
      'http.response.status_code': res.statusCode,
      'tripwire.request_id': requestIdOf(req),
    });
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  context.with(trace.setSpan(parent, span), next);
};
