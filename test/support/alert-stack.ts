import { Receiver } from './receiver';
import { createTestApp, testConfig, type TestApp } from './test-app';
import { startTestWorker } from './test-worker';

/** For one test file: the app on the real servers, a worker on its task queue, an HTTPS receiver. */
export async function startAlertStack(overrides: Record<string, string> = {}): Promise<{
  t: TestApp;
  receiver: Receiver;
  stop(): Promise<void>;
}> {
  const t = await createTestApp({
    config: testConfig({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', ...overrides }),
  });
  const worker = await startTestWorker(t.mongo.db, t.config.TEMPORAL_TASK_QUEUE);
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
