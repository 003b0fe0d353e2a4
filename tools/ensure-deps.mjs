// Runs before `npm run dev` and `npm test`: installs npm packages when node_modules is missing or
// older than package-lock.json. Plain Node on purpose: nothing is installed yet when it runs.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

const marker = 'node_modules/.package-lock.json';
const stale =
  !existsSync(marker) || statSync(marker).mtimeMs < statSync('package-lock.json').mtimeMs;

if (stale) {
  console.log('[setup] installing npm packages…');
  // Not `npm ci`: see .ci/run. The committed lockfile still decides every version.
  const { status } = spawnSync('npm', ['install', '--no-audit', '--no-fund'], { stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? 1);
}
