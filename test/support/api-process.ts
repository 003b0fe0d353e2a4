import { resolve } from 'node:path';
import { freePort, spawnManaged, type ManagedProcess } from '../../tools/stack';

export interface ApiProcess {
  url: string;
  process: ManagedProcess;
}

/**
 * The real API as its own process on a free loopback port, once `/healthz` answers. One process
 * (`node --import tsx`, not the `tsx` CLI, whose SIGKILL would leave its child API running), so a
 * test's kill lands on the API itself. `env` adds to the test's environment (database, queue…);
 * `args` (after `node`) start another entry point: a benchmark's, the built `dist/src/main.js`.
 */
export async function startApiProcess(
  env: Record<string, string>,
  timeoutMs = 90_000,
  args = ['--import', 'tsx', resolve('src/main.ts')],
): Promise<ApiProcess> {
  const port = await freePort();
  const lines: string[] = [];
  const proc = spawnManaged(process.execPath, args, {
    env: {
      ...process.env,
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: String(port),
      DECOY_SMTP_PORT: '0',
      ...env,
    },
    onLine: (line) => lines.push(line),
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while (
    !(await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > deadline || proc.child.exitCode !== null) {
      await proc.stop();
      throw new Error(`API on ${port} did not start:\n${lines.slice(-20).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { url, process: proc };
}
