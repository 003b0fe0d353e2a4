// Starts Jest with a throw-away certificate authority for the tests' HTTPS receivers. Node reads
// NODE_EXTRA_CA_CERTS only when a process starts, so the CA must exist before Jest (and its
// workers) do; certificate checks stay on everywhere. Arguments are passed on to Jest.
// The console is rebuilt first, so its browser tests never drive a stale bundle.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTestCa } from './test-ca.mjs';

const build = spawnSync('node', ['tools/build-console.mjs'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const dir = mkdtempSync(join(tmpdir(), 'tripwire-test-ca-'));
const env = { ...process.env, ...makeTestCa(dir) };
const jest = spawn(join('node_modules', '.bin', 'jest'), process.argv.slice(2), {
  stdio: 'inherit',
  env,
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => jest.kill(signal));
jest.on('exit', (code, signal) => {
  rmSync(dir, { recursive: true, force: true });
  process.exit(code ?? (signal ? 1 : 0));
});
