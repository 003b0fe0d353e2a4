import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

/**
 * A merge's conflict markers once reached a docs page: Prettier had turned `>>>>>>>` into a
 * blockquote, so nothing failed. Either form in a tracked text file fails here.
 */
const MARKER = /^(<{7} |>{7} |={7}$|(> ){7}\S)/m;

describe('tracked files', () => {
  it('when a merge is committed, then no file keeps a conflict marker', () => {
    const files = execFileSync('git', ['ls-files', '*.ts', '*.tsx', '*.md', '*.json', '*.yml'], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .filter(Boolean);
    const marked = files.filter((file) => MARKER.test(readFileSync(resolve(ROOT, file), 'utf8')));
    expect(marked).toEqual([]);
  });
});
