import { startNotice } from '../../src/alerts/alert-workflows';
import type { BuiltInSettings } from '../../src/alerts/built-in-channels';
import { Receiver } from './receiver';
import { createTestApp, testConfig, type TestApp } from './test-app';
import { startTestWorker } from './test-worker';

/** For one test file: the app on the real servers, a worker on its task queue, an HTTPS receiver. */
export async function startAlertStack(
  overrides: Record<string, string> = {},
  /** Built-in channels to configure on the worker (SMTP for the email one, say). */
  builtIns: Partial<BuiltInSettings> = {},
): Promise<{
  t: TestApp;
  receiver: Receiver;
  stop(): Promise<void>;
}> {
  const t = await createTestApp({
    config: testConfig({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', ...overrides }),
  });
  // Endpoint health as the worker has it: CHANNEL_DISABLE_AFTER, notices started on this queue.
  const worker = await startTestWorker(
    t.mongo.db,
    t.config.TEMPORAL_TASK_QUEUE,
    builtIns,
    undefined,
    undefined,
    {
      disableAfterMs: t.config.CHANNEL_DISABLE_AFTER,
      notify: (notice) => startNotice(t.temporal, notice),
    },
  );
  const receiver = await Receiver.start();
  return {
    t,
    receiver,
    async stop() {
      await worker.stop();
      await receiver.stop();
      await t.close();
    },
  };
}
