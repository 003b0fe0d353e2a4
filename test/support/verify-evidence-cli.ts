import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The offline verifier (`tools/verify-evidence.ts`) as an outsider runs it: `doc` written to a
 * file in `dir`, checked against the log's public key. Its exit code and what it printed (its
 * verdict, or the error when it printed none).
 */
export async function verifyEvidenceCli(
  { dir, publicKeyFile }: { dir: string; publicKeyFile: string },
  doc: unknown,
  ...extra: string[]
): Promise<{ code: number; out: string }> {
  const file = join(dir, `export-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, JSON.stringify(doc));
  const args = ['tsx', 'tools/verify-evidence.ts', file, '--public-key', publicKeyFile, ...extra];
  try {
    const { stdout } = await run('npx', args);
    return { code: 0, out: stdout.trim() };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return {
      code: e.code,
      out: e.stdout.trim() || e.stderr.replace(/^npm warn .*\n/gm, '').trim(),
    };
  }
}
