// Runs before `npm run dev` and `npm test`: checks for Node 24, then installs npm packages when
// node_modules is missing or older than package-lock.json, printing progress while npm works (it
// prints nothing of its own for minutes). Plain Node on purpose: nothing is installed yet.
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { clearInterval, setInterval } from 'node:timers';

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(
    `[setup] Node ${process.version} is too old: this project needs Node 24 LTS (nodejs.org, ` +
      '`brew install node@24` on macOS, or `source tools/ensure-node.sh` to fetch it into the cache)',
  );
  process.exit(1);
}

const marker = 'node_modules/.package-lock.json';
const stale =
  !existsSync(marker) || statSync(marker).mtimeMs < statSync('package-lock.json').mtimeMs;

if (stale) {
  const started = Date.now();
  console.log(
    '[setup] installing npm packages (npm install: about 1–2 minutes with an empty npm cache)…',
  );
  // npm lays out every package folder at once, then fills them: only the time says how far it is.
  const progress = setInterval(() => {
    console.log(`[setup]   … npm install, ${Math.round((Date.now() - started) / 1000)} s`);
  }, 10_000);
  // The committed lockfile decides every version; an install leaves it unchanged.
  const npm = spawn('npm', ['install', '--no-audit', '--no-fund'], { stdio: 'inherit' });
  npm.on('exit', (code) => {
    clearInterval(progress);
    if (code !== 0) process.exit(code ?? 1);
    console.log(`[setup] npm packages installed in ${Math.round((Date.now() - started) / 1000)} s`);
  });
}
