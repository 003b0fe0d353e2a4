// Starts Jest with a throw-away certificate authority for the tests' HTTPS receivers. Node reads
// NODE_EXTRA_CA_CERTS only when a process starts, so the CA must exist before Jest (and its
// workers) do; certificate checks stay on everywhere. Arguments are passed on to Jest.
// The console is rebuilt first, so its browser tests never drive a stale bundle.
//
// Without arguments (`npm test`), the whole suite in two passes. First the unit and integration
// projects, two files at a time: their files mostly wait on the shared servers, timers and
// receivers (one alone kept this 2-core machine's cores 23 % busy), and each has its own database
// and task queue. Then the faults and production projects, one file at a time: each starts its own
// servers and kills processes against a clock, and two at once outran their 180 s set-up.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTestCa } from './test-ca.mjs';

const build = spawnSync('node', ['tools/build-console.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const passes =
  process.argv.length > 2
    ? [process.argv.slice(2)]
    : [
        ['--selectProjects', 'unit', 'integration', '--maxWorkers=2'],
        ['--selectProjects', 'faults', 'production', '--maxWorkers=1'],
      ];

const dir = mkdtempSync(join(tmpdir(), 'tripwire-test-ca-'));
const env = { ...process.env, ...makeTestCa(dir) };
let running;
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => running?.kill(signal));

/** One Jest run; its exit code (1 when a signal ended it). */
function jest(args) {
  running = spawn(join('node_modules', '.bin', 'jest'), args, { stdio: 'inherit', env });
  return new Promise((resolve) =>
    running.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))),
  );
}

// Every pass runs even when one fails, so a failing run reports all that failed.
let failed = 0;
for (const args of passes) {
  const code = await jest(args);
  failed ||= code;
}
rmSync(dir, { recursive: true, force: true });
process.exit(failed);
