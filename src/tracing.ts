import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type ReadableSpan,
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
  const resource = resourceFromAttributes({ 'service.name': serviceName });
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
    sinks: {
      exporter: makeWorkflowExporter(workflowSpansTo(tracing), tracing.resource),
    },
  };
}

/** A span as Temporal's workflow sandbox hands it over: OpenTelemetry JS 1.x's shape. */
type WorkflowSpan = Omit<ReadableSpan, 'parentSpanContext' | 'instrumentationScope'> & {
  parentSpanId?: string;
  instrumentationLibrary: ReadableSpan['instrumentationScope'];
};

/**
 * Temporal's interceptors (1.24) record workflow spans with OpenTelemetry JS 1.x inside the
 * sandbox; this process exports with 2.x, which reads a span's parent from `parentSpanContext`
 * and its scope from `instrumentationScope`. Each span is given those before the processor sees
 * it, or workflow spans would reach the collector as roots without a scope.
 */
function workflowSpansTo(tracing: Tracing): Parameters<typeof makeWorkflowExporter>[0] {
  return {
    onEnd(received) {
      const { parentSpanId, instrumentationLibrary, ...span } = received as unknown as WorkflowSpan;
      const context = span.spanContext();
      tracing.processor.onEnd({
        ...span,
        resource: tracing.resource,
        instrumentationScope: instrumentationLibrary,
        parentSpanContext: parentSpanId
          ? { traceId: context.traceId, spanId: parentSpanId, traceFlags: context.traceFlags }
          : undefined,
      });
    },
    onStart: () => undefined,
    forceFlush: () => tracing.processor.forceFlush(),
    shutdown: () => Promise.resolve(),
  };
}
