/**
 * Promises made in workflow code per workflow: each recorded history (test/fixtures/histories)
 * replayed on the current code, with the workflow run on this thread (`debugMode`), counting the
 * promises made in the workflow's realm. `@temporalio/worker` takes a stack trace, each frame
 * mapped through the bundle's source map, for every one of them (its promise hook), so this count
 * is a share of the workflow thread's CPU that does not move with the machine's load.
 *
 *   node --import tsx bench/workflow-promises.ts [fixture …]
 *
 * Without names, every fixture. Each is replayed until two replays in a row count the same (the
 * first ones also load the bundle's modules).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promiseHooks } from 'node:v8';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';

const FIXTURES = join(__dirname, '..', 'test', 'fixtures', 'histories');
const MAX_REPLAYS = 20;

async function main(names: string[]): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    logger: new DefaultLogger('ERROR'),
  });
  let made = 0;
  // A promise of the workflow's realm has that realm's `Promise` as its constructor.
  promiseHooks.onInit((promise) => {
    if (promise.constructor !== Promise) made++;
  });
  // `debugMode` runs the workflow on this thread, where the hook sees it; the replay worker
  // honours it though its options' type leaves it out.
  const options = { workflowBundle, debugMode: true };
  const fixtures = names.length
    ? names
    : readdirSync(FIXTURES)
        .filter((file) => file.endsWith('.json'))
        .map((file) => file.replace(/\.json$/, ''));
  console.log('| Recorded history | promises made in workflow code |\n|---|---:|');
  for (const name of fixtures) {
    const history: unknown = JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8'));
    let last = -1;
    for (let replay = 1; replay <= MAX_REPLAYS; replay++) {
      const before = made;
      await Worker.runReplayHistory(options, history);
      if (made - before === last) break;
      last = made - before;
    }
    console.log(`| ${name} | ${last} |`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
