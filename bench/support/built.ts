/**
 * The service's processes as they are deployed: `npm run build` once per benchmark run, then the
 * package's start command (`node dist/…`, see package.json) without npm in between, so the pid a
 * benchmark reads is the process's own. Through tsx instead, a process keeps Node.js's source maps
 * on, and the workflow sandbox then checks every function it compiles for a source map: its stack
 * traces compile one for each promise a workflow makes, so the worker's cost grew with the
 * workflow's promises, which a deployed worker's does not.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let built = false;

/** The arguments after `node` of `npm run <script>`, once `dist/` is built from this tree. */
export function builtStartArgs(script: 'start:api' | 'start:worker'): string[] {
  if (!built) {
    execFileSync('npm', ['run', 'build'], { stdio: 'ignore' });
    built = true;
  }
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
    scripts: Record<string, string>;
  };
  const [command, ...args] = pkg.scripts[script]!.split(' ');
  if (command !== 'node') throw new Error(`${script} is expected to run node`);
  return args;
}

/**
 * Node.js flags for a started process from a space-separated environment variable
 * (`BENCH_WORKER_NODE_FLAGS`, `BENCH_API_NODE_FLAGS`): `--cpu-prof --cpu-prof-dir=…` profiles it.
 */
export function nodeFlagsFrom(
  variable: 'BENCH_WORKER_NODE_FLAGS' | 'BENCH_API_NODE_FLAGS',
): string[] {
  return (process.env[variable] ?? '').split(' ').filter(Boolean);
}
