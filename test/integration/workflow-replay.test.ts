import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
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
