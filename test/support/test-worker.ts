import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  type WorkflowBundle,
} from '@temporalio/worker';
import type { Db } from 'mongodb';
import { createActivities, type Activities } from '../../activities';
import type { ChannelHealth } from '../../src/alerts/alert-outcomes';
import type { BuiltInSettings } from '../../src/alerts/built-in-channels';
import { IpEnricher } from '../../src/alerts/enrichment';

/** No built-in channel configured, as on a fresh deployment. */
const NO_BUILT_INS: BuiltInSettings = {
  smtpFrom: 'Tripwire alerts <alerts@localhost>',
  telegramApiBase: 'https://api.telegram.org',
};

let bundle: Promise<WorkflowBundle> | undefined;

/** Bundled once per test file (each file runs in its own module registry). */
export function workflowBundle(): Promise<WorkflowBundle> {
  quietRuntime();
  bundle ??= bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    logger: new DefaultLogger('WARN'),
  });
  return bundle;
}

/** Keeps the SDK's INFO lines out of test output; a runtime already installed in this process stays. */
function quietRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // installed by an earlier test file in the same Jest worker
  }
}

/** A real worker on the test Temporal server, polling this test's own task queue. */
export async function startTestWorker(
  db: Db,
  taskQueue: string,
  builtIns: Partial<BuiltInSettings> = {},
  /** Fault injection: the real activities, some of them wrapped (a write failing once, say). */
  wrap: (activities: Activities) => Activities = (activities) => activities,
  /** Another Temporal server than the test suite's (one with the Web UI, say). */
  address = process.env.TEMPORAL_ADDRESS,
  /** Channels disabled on their own after failing this long (CHANNEL_DISABLE_AFTER); absent: never. */
  channelHealth?: ChannelHealth,
): Promise<{ stop(): Promise<void> }> {
  quietRuntime();
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities: wrap(
      createActivities({
        db,
        allowPrivateTargets: true,
        builtIns: { ...NO_BUILT_INS, ...builtIns },
        enricher: new IpEnricher(),
        channelHealth,
      }),
    ),
  });
  const running = worker.run();
  return {
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
