import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { API_OPERATIONS } from '../../src/api';

const run = promisify(execFile);
const PAGE = 'docs/api-reference.md';

describe('docs/api-reference.md', () => {
  // Prettier formats the page and loads its plugins with dynamic imports, so this runs the tool.
  it('when the operations change, then the page is regenerated (npm run docs:api)', async () => {
    await expect(
      run(process.execPath, ['--import', 'tsx', 'tools/docs-api.ts', '--check']),
    ).resolves.toBeDefined();
  });

  it('when read, then every operation has its section', () => {
    const page = readFileSync(PAGE, 'utf8');
    const missing = API_OPERATIONS.filter(
      (op) => !page.includes(`### \`${op.method.toUpperCase()} ${op.path}\``),
    ).map((op) => op.operationId);
    expect(missing).toEqual([]);
  });
});
