/**
 * Independent transparency-log tools for the tests, built with Go from the module proxy into the
 * per-user cache (like tools/dev-tools.ts), so CI builds them once: `tlog-mirror` (our small client
 * on filippo.io/torchwood's tlog-tiles client, in ./tlog-mirror) and torchwood's `litewitness`, a
 * real C2SP tlog-witness.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { cacheDir } from '../../tools/dev-tools';
import { freePort, spawnManaged, type ManagedProcess } from '../../tools/stack';
import { EMPTY_ROOT } from '../../src/evidence/log/merkle';
import { keyId } from '../../src/evidence/log/signed-note';

const run = promisify(execFile);

interface SqliteDatabase {
  exec(sql: string): void;
  prepare(sql: string): { run(...values: (string | number)[]): unknown };
  close(): void;
}
// node:sqlite is built into the Node the tests run on; this @types/node (20) does not declare it.
const { DatabaseSync } = createRequire(__filename)('node:sqlite') as {
  DatabaseSync: new (path: string) => SqliteDatabase;
};
const LITEWITNESS_VERSION = 'v0.6.1';
const MIRROR_SOURCE = resolve(__dirname, 'tlog-mirror');
/** The signature type of an Ed25519 cosignature/v1 key (C2SP tlog-cosignature). */
const COSIGNATURE_V1 = 0x04;

/** Builds into a temporary directory, then renames into place: concurrent builds cannot collide. */
async function cachedBuild(
  dir: string,
  name: string,
  build: (out: string) => Promise<void>,
): Promise<string> {
  const binary = join(dir, name);
  if (existsSync(binary)) return binary;
  await mkdir(cacheDir(), { recursive: true });
  const tmp = await mkdtemp(join(cacheDir(), '.build-'));
  try {
    await build(tmp);
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    if (!existsSync(binary)) throw err;
  }
  return binary;
}

/** The tlog-tiles mirror client, rebuilt when its source changes. */
export async function tlogMirror(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) {
    hash.update(await readFile(join(MIRROR_SOURCE, file)));
  }
  const dir = join(cacheDir(), `tlog-mirror-${hash.digest('hex').slice(0, 12)}`);
  return cachedBuild(dir, 'tlog-mirror', async (out) => {
    await run('go', ['build', '-o', join(out, 'tlog-mirror'), '.'], {
      cwd: MIRROR_SOURCE,
      // Never writes go.mod or go.sum in the repository; no VCS stamp (a worktree may have none).
      env: { ...process.env, GOFLAGS: '-mod=readonly -buildvcs=false' },
    });
  });
}

export async function litewitnessBinary(): Promise<string> {
  const dir = join(cacheDir(), `litewitness-${LITEWITNESS_VERSION}`);
  return cachedBuild(dir, 'litewitness', async (out) => {
    await run('go', ['install', `filippo.io/torchwood/cmd/litewitness@${LITEWITNESS_VERSION}`], {
      env: { ...process.env, GOBIN: out },
    });
  });
}

export interface RunningWitness {
  /** Its submission prefix. */
  url: string;
  /** Its cosigner vkey (type 0x04), as EVIDENCE_WITNESSES and the monitor name it. */
  vkey: string;
  /** `<vkey> <url>`: its entry in EVIDENCE_WITNESSES. */
  entry: string;
  stop(): Promise<void>;
}

/**
 * A litewitness on a free loopback port that knows one log (its origin and vkey), with a fresh
 * Ed25519 key held by its own ssh-agent, as litewitness wants. Its SQLite database is set up the
 * way `witnessctl add-log` / `add-key` would (witnessctl's own build needs a module the proxy here
 * does not serve).
 */
export async function startLitewitness(
  name: string,
  log: { origin: string; vkey: string },
): Promise<RunningWitness> {
  const binary = await litewitnessBinary();
  const dir = await mkdtemp(join(tmpdir(), 'litewitness-'));
  const keyFile = join(dir, 'key');
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', keyFile]);
  const socket = join(dir, 'agent.sock');
  const processes: ManagedProcess[] = [];
  const lines: string[] = [];
  const stop = async () => {
    for (const p of processes.reverse()) await p.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const agent = spawnManaged('ssh-agent', ['-D', '-a', socket], { onLine: () => undefined });
    processes.push(agent);
    await waitFor(() => existsSync(socket), 'ssh-agent');
    await run('ssh-add', [keyFile], { env: { ...process.env, SSH_AUTH_SOCK: socket } });
    const { stdout } = await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${keyFile}.pub`]);
    const fingerprint = stdout.split(' ')[1]!;

    const db = new DatabaseSync(join(dir, 'witness.db'));
    db.exec(`CREATE TABLE log (origin TEXT PRIMARY KEY, tree_size INTEGER NOT NULL, tree_hash TEXT NOT NULL);
      CREATE TABLE key (origin TEXT NOT NULL, key TEXT NOT NULL, FOREIGN KEY(origin) REFERENCES log(origin));`);
    db.prepare('INSERT INTO log (origin, tree_size, tree_hash) VALUES (?, 0, ?)').run(
      log.origin,
      EMPTY_ROOT.toString('base64'),
    );
    db.prepare('INSERT INTO key (origin, key) VALUES (?, ?)').run(log.origin, log.vkey);
    db.close();

    const port = await freePort();
    const witness = spawnManaged(
      binary,
      [
        `-listen=127.0.0.1:${port}`,
        `-db=${join(dir, 'witness.db')}`,
        `-name=${name}`,
        `-key=${fingerprint}`,
        `-ssh-agent=${socket}`,
      ],
      { onLine: (line) => lines.push(line) },
    );
    processes.push(witness);
    const url = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await fetch(url).catch(() => null)) !== null, 'litewitness', lines);

    // The ssh public key blob ends with the 32 raw Ed25519 bytes.
    const blob = Buffer.from((await readFile(`${keyFile}.pub`, 'utf8')).split(' ')[1]!, 'base64');
    const raw = blob.subarray(blob.length - 32);
    const id = keyId(name, raw, COSIGNATURE_V1).toString('hex');
    const vkey = `${name}+${id}+${Buffer.concat([Buffer.of(COSIGNATURE_V1), raw]).toString('base64')}`;
    return { url, vkey, entry: `${vkey} ${url}`, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function waitFor(
  ready: () => boolean | Promise<boolean>,
  what: string,
  output: string[] = [],
): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`${what} did not start: ${output.join('\n')}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}
