/**
 * Stops the test servers, after one last check across the whole run: every query the service sent
 * to the embedded database was served by an index (its scan log lists those that were not; the
 * tests' own queries come from another client and are left out). On MongoDB there is no scan log,
 * and the check is skipped.
 */
import { rm } from 'node:fs/promises';
import { MongoClient } from 'mongodb';
import { SERVICE_APP_NAME } from '../../src/db/mongo';
import { scanLog } from './query-plans';

export default async function globalTeardown(): Promise<void> {
  const stack = globalThis.testStack;
  if (!stack) return;
  let unindexed: string[] = [];
  if (process.env.MONGODB_URI) {
    const client = await MongoClient.connect(process.env.MONGODB_URI, {
      appName: 'tripwire-tests',
    });
    const scans = await scanLog(client.db('admin'));
    unindexed = (scans ?? []).filter((s) => s.app === SERVICE_APP_NAME).map((s) => s.query);
    await client.close();
  }
  for (const service of stack.services) await service.stop();
  await rm(stack.dataDir, { recursive: true, force: true });
  if (unindexed.length) {
    throw new Error(
      `queries the service sent that no index serves (declare one next to the query):\n  ${unindexed.join('\n  ')}`,
    );
  }
}
