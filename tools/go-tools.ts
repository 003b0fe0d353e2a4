/**
 * Finds or builds the Go-built development tools: the Temporal CLI (its dev server and Web UI) and
 * our FerretDB wrapper (tools/ferretdb). Binaries live in a per-user cache outside the clone, so a
 * fresh clone on the same machine (CI) reuses them; they are rebuilt only when missing or changed.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const FERRETDB_SOURCE = resolve(__dirname, 'ferretdb');

export type Log = (line: string) => void;

export function cacheDir(): string {
  const base = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  return join(base, 'tripwire-service');
}

export async function ensureTemporalCli(log: Log): Promise<string> {
  const binary = join(cacheDir(), `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal');
  if (existsSync(binary)) return binary;
  await goBuild(log, `Temporal CLI ${TEMPORAL_CLI_VERSION}`, binary, (tmp) => ({
    args: ['install', '-v', `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`],
    env: { GOBIN: tmp },
    output: join(tmp, 'temporal'),
  }));
  return binary;
}

export async function ensureFerretDb(log: Log): Promise<string> {
  const key = await sourceKey(['go.mod', 'go.sum', 'main.go']);
  const binary = join(cacheDir(), `ferretdb-${key}`, 'ferretdb');
  if (existsSync(binary)) return binary;
  await goBuild(log, 'FerretDB v1.24 (tools/ferretdb)', binary, (tmp) => ({
    args: ['build', '-v', '-o', join(tmp, 'ferretdb'), '.'],
    cwd: FERRETDB_SOURCE,
    output: join(tmp, 'ferretdb'),
  }));
  await pruneOtherBuilds('ferretdb-', `ferretdb-${key}`);
  return binary;
}

async function sourceKey(files: string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const file of files) hash.update(await readFile(join(FERRETDB_SOURCE, file)));
  return hash.digest('hex').slice(0, 12);
}

async function pruneOtherBuilds(prefix: string, keep: string): Promise<void> {
  for (const entry of await readdir(cacheDir())) {
    if (entry.startsWith(prefix) && entry !== keep) {
      await rm(join(cacheDir(), entry), { recursive: true, force: true });
    }
  }
}

interface GoCommand {
  args: string[];
  cwd?: string;
  env?: Record<string, string>;
  output: string;
}

/** Builds into a temporary folder and renames, so an interrupted build never leaves a bad binary. */
async function goBuild(
  log: Log,
  what: string,
  binary: string,
  command: (tmp: string) => GoCommand,
) {
  await mkdir(cacheDir(), { recursive: true });
  const tmp = await mkdtemp(join(cacheDir(), '.build-'));
  const { args, cwd, env, output } = command(tmp);
  log(`building ${what} with ${await goVersion()} (first run only; this takes a few minutes)`);
  const started = Date.now();
  let packages = 0;
  const progress = setInterval(() => {
    log(`  … ${packages} packages compiled, ${Math.round((Date.now() - started) / 1000)} s`);
  }, 15_000);
  try {
    const stderr: string[] = [];
    const code = await new Promise<number | null>((done, fail) => {
      const child = spawn('go', args, {
        cwd,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'inherit', 'pipe'],
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        const lines = chunk.split('\n').filter(Boolean);
        packages += lines.filter((l) => !l.startsWith('go: ') && !l.includes(' ')).length;
        stderr.push(...lines);
      });
      child.on('error', fail).on('close', done);
    });
    if (code !== 0) throw new Error(`building ${what} failed:\n${stderr.slice(-30).join('\n')}`);
    await mkdir(resolve(binary, '..'), { recursive: true });
    await rename(output, binary);
    log(`built ${what} in ${Math.round((Date.now() - started) / 1000)} s → ${binary}`);
  } finally {
    clearInterval(progress);
    await rm(tmp, { recursive: true, force: true });
  }
}

async function goVersion(): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn('go', ['version'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.on('error', () =>
      fail(
        new Error(
          'Go is needed to build the development tools: install Go 1.22 or newer, or set MONGODB_URI and TEMPORAL_ADDRESS',
        ),
      ),
    );
    child.on('close', () => done(out.trim().replace(/^go version /, '')));
  });
}

if (require.main === module) {
  const log: Log = (line) => console.log(`[tools] ${line}`);
  (async () => [await ensureTemporalCli(log), await ensureFerretDb(log)])().then(
    (binaries) => log(`ready: ${binaries.join(', ')}`),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
