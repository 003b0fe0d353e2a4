import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { operationsFor } from './http/operation';

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
  help: 'Metered requests refused, by action and error (burst, plan limit, daily allowance unavailable)',
  labelNames: ['action', 'error'] as const,
  registers: [registry],
});

export const evidenceWrites = new Counter({
  name: 'evidence_records_written_total',
  help: 'Sealed evidence records appended, by kind',
  labelNames: ['kind'] as const,
  registers: [registry],
});

export const checkpointSigner = new Gauge({
  name: 'evidence_checkpoint_signer',
  help: "1 while this process holds the evidence log's checkpoint signing lease, else 0",
  registers: [registry],
});

export const witnessCosignatures = new Counter({
  name: 'evidence_witness_cosignatures_total',
  help: 'Checkpoints submitted to each witness, by outcome (cosigned, refused, unreachable)',
  labelNames: ['witness', 'outcome'] as const,
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
const operation = operationsFor<{ metricsToken: RequestHandler }>('Operations');

/** `GET /metrics`: this process's metrics, behind METRICS_TOKEN when one is set. */
export const metricsOperations = [
  operation({
    operationId: 'getMetrics',
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics',
    description:
      'Request latency, meter refusals, evidence writes, and Node process metrics. With `METRICS_TOKEN` set, only `Authorization: Bearer <METRICS_TOKEN>` gets in.',
    auth: 'none',
    beforeKeyLayer: true,
    before: ({ metricsToken }) => [metricsToken],
    success: { status: 200, description: 'Prometheus text format', contentType: 'text/plain' },
    errors: {
      401: 'METRICS_TOKEN is set and `Authorization: Bearer <METRICS_TOKEN>` was not sent',
    },
    handler: async ({ res }) => {
      res.type(registry.contentType).send(await registry.metrics());
    },
  }),
];

export interface WorkerEndpointOptions {
  /** `GET /healthz` answers 200 while this is true, else 503 (the container's health check). */
  healthy: () => boolean;
  /** `host:port` of the Temporal SDK's Prometheus exporter, whose lines `/metrics` appends. */
  sdkMetrics?: string;
}

/** The SDK's metrics text; empty when its exporter does not answer, so ours are still served. */
async function sdkMetricsText(address: string | undefined): Promise<string> {
  if (!address) return '';
  const res = await fetch(`http://${address}/metrics`).catch(() => undefined);
  return res?.ok ? res.text() : '';
}

/**
 * For processes without Express (the worker): `/metrics` (this registry, then the Temporal SDK's
 * own metrics) and `/healthz`; anything else 404s.
 */
export async function serveMetrics(
  host: string,
  port: number,
  { healthy, sdkMetrics }: WorkerEndpointOptions = { healthy: () => true },
): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url === '/healthz') {
      const ok = healthy();
      return void res.writeHead(ok ? 200 : 503).end(ok ? 'ok' : 'not running');
    }
    if (req.url !== '/metrics') return void res.writeHead(404).end();
    Promise.all([registry.metrics(), sdkMetricsText(sdkMetrics)]).then(
      ([own, sdk]) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(own + sdk),
      () => res.writeHead(500).end(),
    );
  });
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}
