import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { RequestHandler } from 'express';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics of this process (the API's at `GET /metrics`, the worker's on
 * `WORKER_METRICS_PORT`). One registry per process; metric names say what they count.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request latency by route template, method and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const meterRefusals = new Counter({
  name: 'meter_refusals_total',
  help: 'Metered requests refused, by action and error (burst, plan limit, daily meter unavailable)',
  labelNames: ['action', 'error'] as const,
  registers: [registry],
});

export const evidenceWrites = new Counter({
  name: 'evidence_records_written_total',
  help: 'Sealed evidence records appended, by kind',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const deliveryAttempts = new Counter({
  name: 'alert_delivery_attempts_total',
  help: 'Alert delivery attempts by channel kind, attempt number and verdict',
  labelNames: ['kind', 'attempt', 'verdict'] as const,
  registers: [registry],
});

export const deliveryOutcomes = new Counter({
  name: 'alert_delivery_outcomes_total',
  help: 'Alert deliveries after their last attempt, by channel kind and outcome',
  labelNames: ['kind', 'outcome'] as const,
  registers: [registry],
});

/** `GET /metrics` in the Prometheus text format. */
export const metricsHandler: RequestHandler = async (_req, res) => {
  res.type(registry.contentType).send(await registry.metrics());
};

/** For processes without Express (the worker): a server that answers `/metrics` and 404s. */
export async function serveMetrics(host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url !== '/metrics') return void res.writeHead(404).end();
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}
