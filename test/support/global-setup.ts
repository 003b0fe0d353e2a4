/**
 * Starts the real MongoDB-wire server and Temporal dev server once for all integration tests, on
 * free ports with throw-away data folders, or reuses servers named by MONGODB_URI and
 * TEMPORAL_ADDRESS. Test files reach them through those two variables.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, provideMongo, provideTemporal, type Service } from '../../tools/stack';

declare global {
  var testStack: { services: Service[]; dataDir: string } | undefined;
}

export default async function globalSetup(): Promise<void> {
  const log = (line: string) => {
    if (process.env.TEST_SERVER_LOGS || /build|…/.test(line)) console.log(`[test-stack] ${line}`);
  };
  const dataDir = await mkdtemp(join(tmpdir(), 'tripwire-test-'));
  const mongo = await provideMongo({ dataDir, port: await freePort(), log });
  const temporal = await provideTemporal({ dataDir, port: await freePort(), log });
  process.env.MONGODB_URI = mongo.address;
  process.env.TEMPORAL_ADDRESS = temporal.address;
  globalThis.testStack = { services: [temporal, mongo], dataDir };
}
