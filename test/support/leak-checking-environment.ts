import { TestEnvironment } from 'jest-environment-node';
import type { MongoClient } from 'mongodb';

/**
 * Node's test environment, plus one check when a file is done: a MongoDB client it connected and
 * never closed fails it (see mongo-client-tracking.ts), and is closed here so the run still exits.
 */
export default class LeakCheckingEnvironment extends TestEnvironment {
  override async teardown(): Promise<void> {
    const tracked = this.global.openMongoClients as Map<MongoClient, string> | undefined;
    const open = [...(tracked ?? [])];
    await Promise.all(open.map(([client]) => client.close(true).catch(() => undefined)));
    await super.teardown();
    if (open.length) {
      const names = open.map(([client]) => client.options.appName ?? 'no appName').join(', ');
      const where = open.map(([, stack]) => stack).join('\n');
      throw new Error(
        `${open.length} MongoDB client(s) connected by this file were never closed (${names}): close them in afterAll\n${where}`,
      );
    }
  }
}
