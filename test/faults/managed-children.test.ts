/**
 * A process that started servers through `spawnManaged` (a benchmark, a test's helper) and then
 * dies of an uncaught error must not leave them running: each is in a process group of its own, so
 * nothing else would end it, and a benchmark's database and Temporal left behind eat the CPU and
 * the ports of every run after it.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const STACK = join(__dirname, '../../tools/stack.ts');

/** Running: present in /proc and not a zombie waiting for its new parent to reap it. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

it('when a parent dies of an uncaught error, then the children it spawned end with it', async () => {
  const parent = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `const { spawnManaged } = await import(${JSON.stringify(STACK)});
       const child = spawnManaged('sleep', ['300'], { onLine: () => undefined });
       console.log(child.child.pid);
       setTimeout(() => { throw new Error('a crash'); }, 200);`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  parent.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((done) => parent.once('exit', done));
  expect(code).not.toBe(0);
  const pid = Number(out.trim());
  expect(pid).toBeGreaterThan(0);
  try {
    for (let waited = 0; waited < 20 && running(pid); waited++) {
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(running(pid)).toBe(false);
  } finally {
    if (running(pid)) process.kill(pid, 'SIGKILL');
  }
});
