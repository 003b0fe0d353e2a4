import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import { startTracing, workerTracing } from '../../src/tracing';
import * as workflows from '../../workflows';
import { workflowBundle } from '../support/test-worker';

// Histories of executions that really ran (recorded with tools/record-history.ts). A workflow
// change that would break such executions still in flight fails here with a determinism error.
const dir = join(__dirname, '..', 'fixtures', 'histories');
const fixtures = readdirSync(dir).filter((file) => file.endsWith('.json'));

describe('workflow replay', () => {
  it('when there are recorded histories, then there is at least one per workflow type', () => {
    const recorded = new Set(
      fixtures.map((file) => {
        const history = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
          events: {
            workflowExecutionStartedEventAttributes?: { workflowType: { name: string } };
          }[];
        };
        return history.events[0]!.workflowExecutionStartedEventAttributes!.workflowType.name;
      }),
    );
    expect([...recorded].sort()).toEqual(Object.keys(workflows).sort());
  });

  it.each(fixtures)(
    'when %s is replayed on the current code, then it replays cleanly',
    async (file) => {
      const history: unknown = JSON.parse(readFileSync(join(dir, file), 'utf8'));
      await expect(
        Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history as never),
      ).resolves.toBeUndefined();
    },
  );
});

describe('workflow replay with tracing on', () => {
  // A deployment that sets OTEL_EXPORTER_OTLP_ENDPOINT bundles Temporal's OpenTelemetry workflow
  // interceptors, whose span ids come from the workflow's seeded random source: an execution
  // recorded untraced replays traced only while the workflows draw no random values themselves.
  const tracing = startTracing('tripwire-replay', { exporter: new InMemorySpanExporter() })!;
  // The workflow interceptors go into the bundle; replay needs only the sink they export through.
  const { interceptors, sinks } = workerTracing(tracing);
  const traced = bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    workflowInterceptorModules: interceptors.workflowModules,
    logger: new DefaultLogger('WARN'),
  });
  afterAll(() => tracing.shutdown());

  it.each(fixtures)(
    'when %s is replayed with the tracing interceptors, then it replays cleanly',
    async (file) => {
      await expect(
        Worker.runReplayHistory(
          { workflowBundle: await traced, sinks },
          JSON.parse(readFileSync(join(dir, file), 'utf8')) as never,
        ),
      ).resolves.toBeUndefined();
    },
  );
});
