import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkerOptions } from '@temporalio/worker';

/** A registered tracer provider, and what the worker needs to export its workflows' spans. */
export interface Tracing {
  processor: SpanProcessor;
  resource: Resource;
  shutdown(): Promise<void>;
}

/**
 * Registers this process's tracer provider (with W3C trace-context propagation and an
 * AsyncLocalStorage context): spans go over OTLP/HTTP to `otlpEndpoint` (the
 * OTEL_EXPORTER_OTLP_ENDPOINT base URL), or to `exporter` (tests). Neither: no provider, so every
 * span is a no-op and tracing costs nothing.
 */
export function startTracing(
  serviceName: string,
  target: { otlpEndpoint?: string; exporter?: SpanExporter },
): Tracing | undefined {
  const processor = target.exporter
    ? new SimpleSpanProcessor(target.exporter)
    : target.otlpEndpoint
      ? new BatchSpanProcessor(
          new OTLPTraceExporter({ url: `${target.otlpEndpoint.replace(/\/$/, '')}/v1/traces` }),
        )
      : undefined;
  if (!processor) return undefined;
  const resource = new Resource({ 'service.name': serviceName });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  return { processor, resource, shutdown: () => provider.shutdown() };
}

/**
 * Temporal's OpenTelemetry interceptors for a worker: workflow and activity spans continue the
 * trace the client's start or signal carried in its headers; workflow spans leave the sandbox
 * through the `exporter` sink.
 */
export function workerTracing(
  tracing: Tracing,
): Required<Pick<WorkerOptions, 'interceptors' | 'sinks'>> {
  return {
    interceptors: {
      workflowModules: [
        require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
      ],
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.processor, tracing.resource) },
  };
}
