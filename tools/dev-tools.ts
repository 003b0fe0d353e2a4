/**
 * Finds or builds the development tools: the Temporal CLI (its dev server and Web UI, built with
 * Go) and the embedded MongoDB-wire server (tools/mongo-server, built with Maven). Builds live in a
 * per-user cache outside the clone, so a fresh clone on the same machine (CI) reuses them; they are
 * rebuilt only when missing or changed.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const MONGO_SERVER_SOURCE = resolve(__dirname, 'mongo-server');

export type Log = (line: string) => void;

export function cacheDir(): string {
  const base = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  return join(base, 'tripwire-service');
}

export async function ensureTemporalCli(log: Log): Promise<string> {
  const binary = join(cacheDir(), `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal');
  if (existsSync(binary)) return binary;
  await mkdir(cacheDir(), { recursive: true });
  const tmp = await mkdtemp(join(cacheDir(), '.build-'));
  try {
    await runBuild(log, `Temporal CLI ${TEMPORAL_CLI_VERSION} with Go`, {
      command: 'go',
      args: ['install', `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`],
      env: { GOBIN: tmp },
      missing:
        'Go 1.22 or newer is needed to build the Temporal CLI: install it, or set TEMPORAL_ADDRESS',
    });
    await mkdir(resolve(binary, '..'), { recursive: true });
    await rename(join(tmp, 'temporal'), binary);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return binary;
}

/** How to start the embedded database: `java` with this classpath and main class. */
export interface JavaCommand {
  classpath: string;
  mainClass: string;
}

export async function ensureMongoServer(log: Log): Promise<JavaCommand> {
  const key = await sourceKey(MONGO_SERVER_SOURCE);
  const folder = join(cacheDir(), `mongo-server-${key}`);
  const command = {
    classpath: `${join(folder, 'tripwire-mongo-server.jar')}:${join(folder, 'lib', '*')}`,
    mainClass: 'tripwire.mongo.Main',
  };
  if (existsSync(join(folder, 'tripwire-mongo-server.jar'))) return command;
  await mkdir(cacheDir(), { recursive: true });
  const tmp = await mkdtemp(join(cacheDir(), '.build-'));
  try {
    // Maven builds in a copy, so the clone stays clean and two builds never share `target/`.
    await cp(MONGO_SERVER_SOURCE, join(tmp, 'src'), { recursive: true });
    await runBuild(log, 'the embedded MongoDB server (tools/mongo-server) with Maven', {
      command: 'mvn',
      args: ['-q', '-B', 'package', '-DskipTests'],
      cwd: join(tmp, 'src'),
      missing:
        'Java 17 and Maven are needed to build the embedded database: run tools/install-system-packages.sh, or set MONGODB_URI',
    });
    const target = join(tmp, 'src', 'target');
    await rename(
      join(target, 'tripwire-mongo-server-1.jar'),
      join(target, 'tripwire-mongo-server.jar'),
    );
    await rm(folder, { recursive: true, force: true });
    await mkdir(folder, { recursive: true });
    await rename(
      join(target, 'tripwire-mongo-server.jar'),
      join(folder, 'tripwire-mongo-server.jar'),
    );
    await rename(join(target, 'lib'), join(folder, 'lib'));
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  await pruneOtherBuilds('mongo-server-', `mongo-server-${key}`);
  return command;
}

/** A hash of every file under `folder` except build output, so any source change rebuilds. */
async function sourceKey(folder: string): Promise<string> {
  const hash = createHash('sha256');
  const files = (await readdir(folder, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile() && !join(entry.parentPath, entry.name).includes('/target/'))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  for (const file of files) hash.update(file.slice(folder.length)).update(await readFile(file));
  return hash.digest('hex').slice(0, 12);
}

async function pruneOtherBuilds(prefix: string, keep: string): Promise<void> {
  for (const entry of await readdir(cacheDir())) {
    if (entry.startsWith(prefix) && entry !== keep) {
      await rm(join(cacheDir(), entry), { recursive: true, force: true });
    }
  }
}

interface BuildCommand {
  command: string;
  args: string[];
  cwd?: string;
  env?: Record<string, string>;
  /** What to tell the user when the build tool itself is missing. */
  missing: string;
}

/**
 * Runs a build in a temporary folder (the caller renames its output into place, so an interrupted
 * build never leaves a half-written tool), printing progress while it runs.
 */
async function runBuild(log: Log, what: string, build: BuildCommand): Promise<void> {
  log(`building ${what} (first run only; this takes a few minutes)`);
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  const progress = setInterval(() => log(`  … still building, ${seconds()} s`), 15_000);
  try {
    const output: string[] = [];
    const code = await new Promise<number | null>((done, fail) => {
      const child = spawn(build.command, build.args, {
        cwd: build.cwd,
        env: { ...process.env, ...build.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      for (const stream of [child.stdout, child.stderr]) {
        stream.setEncoding('utf8').on('data', (chunk: string) => {
          output.push(...chunk.split('\n').filter(Boolean));
        });
      }
      child.on('error', () => fail(new Error(build.missing))).on('close', done);
    });
    if (code !== 0) throw new Error(`building ${what} failed:\n${output.slice(-30).join('\n')}`);
    log(`built ${what} in ${seconds()} s`);
  } finally {
    clearInterval(progress);
  }
}

if (require.main === module) {
  const log: Log = (line) => console.log(`[tools] ${line}`);
  (async () => [await ensureTemporalCli(log), (await ensureMongoServer(log)).classpath])().then(
    (tools) => log(`ready: ${tools.join(', ')}`),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
