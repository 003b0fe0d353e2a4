/**
 * Saves the event history of a finished workflow as a replay fixture, so later changes to that
 * workflow's code are checked against executions that really ran:
 *   tsx tools/record-history.ts <workflowId> <fixture-name>
 * Reads TEMPORAL_ADDRESS (default 127.0.0.1:7233, the `npm run dev` server).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';

async function main([workflowId, name]: string[]): Promise<void> {
  if (!workflowId || !name)
    throw new Error('usage: tsx tools/record-history.ts <workflowId> <fixture-name>');
  const connection = await Connection.connect({
    address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
  });
  try {
    const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
    const file = join('test', 'fixtures', 'histories', `${name}.json`);
    // The proto3 JSON form, as the Temporal UI and CLI download it.
    await writeFile(file, JSON.stringify(JSON.parse(historyToJSON(history)), null, 2) + '\n');
    console.log(`wrote ${file} (${history.events?.length ?? 0} events)`);
  } finally {
    await connection.close();
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
