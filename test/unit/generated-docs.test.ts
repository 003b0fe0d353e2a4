import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { API_OPERATIONS } from '../../src/api';
import { CONFIG_VARIABLES } from '../../src/config';

const run = promisify(execFile);

describe('the generated pages (docs/api-reference.md, the settings of docs/configuration.md)', () => {
  // Prettier formats the pages and loads its plugins with dynamic imports, so this runs the tool.
  it('when the operations or the config schema change, then the pages are regenerated (npm run docs:generate)', async () => {
    await expect(
      run(process.execPath, ['--import', 'tsx', 'tools/generate-docs.ts', '--check']),
    ).resolves.toBeDefined();
  });

  it('when read, then every operation has its section', () => {
    const page = readFileSync('docs/api-reference.md', 'utf8');
    const missing = API_OPERATIONS.filter(
      (op) => !page.includes(`### \`${op.method.toUpperCase()} ${op.path}\``),
    ).map((op) => op.operationId);
    expect(missing).toEqual([]);
  });

  it('when read, then every setting has its row', () => {
    const page = readFileSync('docs/configuration.md', 'utf8');
    expect(CONFIG_VARIABLES.filter((name) => !page.includes(`| \`${name}\``))).toEqual([]);
  });
});
