/**
 * A monitor of the evidence log that anyone can run: it mirrors the log's tiles (C2SP tlog-tiles,
 * under `<base url>/log/`), recomputes the root of every checkpoint it sees from the entries it
 * mirrored, so each new checkpoint is proven to extend the last one it saw, and checks that every
 * witness in its set cosigned it.
 *
 *   npm run evidence-monitor -- <base url> --public-key <vkey or file>
 *       [--witness <witness vkey or file> …] [--state <dir>] [--every <seconds>]
 *
 * The mirror and the last checkpoint seen are kept in `--state` (default `.evidence-monitor/`),
 * so each run continues where the last stopped; `--every` keeps watching. Prints one line per
 * check, OK or FAILED with what is wrong (a fork, a rewritten entry, a missing cosignature); exit
 * code 0 when all holds, 1 when not, 2 when the monitor cannot run.
 */
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { leafHash, peaksRoot, pushLeaf, type Peak } from '../src/evidence/log/merkle';
import {
  cosignatureTime,
  openNote,
  parseCheckpoint,
  parseCosignerKey,
  parseVerifier,
  splitNote,
  type Checkpoint,
  type NoteVerifier,
} from '../src/evidence/log/signed-note';
import { parseEntryBundle, TILE_WIDTH, tilePath, type TileRef } from '../src/evidence/log/tiles';

/** The log misbehaved: what the monitor reports and exits 1 for. */
class Misbehaviour extends Error {}

interface State {
  origin: string;
  size: number;
  rootHash: string;
  peaks: { level: number; index: number; hash: string }[];
}

interface Options {
  prefix: string;
  key: NoteVerifier;
  witnesses: NoteVerifier[];
  dir: string;
}

const ENTRY_SIZE = 32;
const keyArg = (value: string) => (existsSync(value) ? readFileSync(value, 'utf8') : value).trim();

async function fetchOk(url: string): Promise<Response | null> {
  const res = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  if (res.status === 404) return null;
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return res;
}

/** A tile or bundle as served, falling back to the full one when a partial one is gone. */
async function resource(prefix: string, ref: TileRef): Promise<Buffer> {
  for (const width of ref.width < TILE_WIDTH ? [ref.width, TILE_WIDTH] : [TILE_WIDTH]) {
    const res = await fetchOk(`${prefix}/${tilePath({ ...ref, width })}`);
    if (res) return Buffer.from(await res.arrayBuffer());
  }
  throw new Misbehaviour(`${tilePath(ref)} is missing though a checkpoint covers it`);
}

/** Entries [from, to) as the log serves them, each checked against its level-0 tile. */
async function entries(prefix: string, from: number, to: number): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (let n = Math.floor(from / TILE_WIDTH); n * TILE_WIDTH < to; n++) {
    const width = Math.min(TILE_WIDTH, to - n * TILE_WIDTH);
    const bundle = await resource(prefix, { level: 'entries', index: n, width });
    let served: Buffer[];
    try {
      served = parseEntryBundle(bundle);
    } catch (err) {
      throw new Misbehaviour(`bundle ${n}: ${(err as Error).message}`);
    }
    const hashes = await resource(prefix, { level: 0, index: n, width });
    if (served.length < width || hashes.length < width * 32) {
      throw new Misbehaviour(`tile ${n} holds fewer than the ${width} entries a checkpoint covers`);
    }
    served.slice(0, width).forEach((entry, i) => {
      const index = n * TILE_WIDTH + i;
      if (entry.length !== ENTRY_SIZE) {
        throw new Misbehaviour(`entry ${index} is ${entry.length} bytes, not a 32-byte hash`);
      }
      if (!hashes.subarray(i * 32, i * 32 + 32).equals(leafHash(entry))) {
        throw new Misbehaviour(`tile 0/${n} does not hold the hash of entry ${index}`);
      }
    });
    out.push(...served.slice(Math.max(0, from - n * TILE_WIDTH), width));
  }
  return out;
}

async function loadState(dir: string): Promise<{ state: State | null; mirror: Buffer }> {
  if (!existsSync(join(dir, 'state.json'))) return { state: null, mirror: Buffer.alloc(0) };
  const state = JSON.parse(await readFile(join(dir, 'state.json'), 'utf8')) as State;
  return { state, mirror: await readFile(join(dir, 'entries')) };
}

/** Which mirrored entry the log now serves differently, if any. */
async function firstRewritten(prefix: string, mirror: Buffer, size: number): Promise<string> {
  const served = await entries(prefix, 0, size);
  const i = served.findIndex((e, index) => !e.equals(mirror.subarray(index * 32, index * 32 + 32)));
  return i < 0
    ? `the log's checkpoint does not extend the ${size} entries mirrored before, though it serves them unchanged`
    : `entry ${i} was rewritten: mirrored ${mirror.subarray(i * 32, i * 32 + 32).toString('hex')}, now served ${served[i]!.toString('hex')}`;
}

/** One look at the log: verify its newest checkpoint against everything seen before. */
async function check({ prefix, key, witnesses, dir }: Options): Promise<string> {
  const res = await fetchOk(`${prefix}/checkpoint`);
  if (!res) throw new Error(`${prefix}/checkpoint: nothing published yet`);
  const note = await res.text();
  let checkpoint: Checkpoint;
  try {
    checkpoint = parseCheckpoint(openNote(note, [key]));
  } catch (err) {
    throw new Misbehaviour(`the checkpoint: ${(err as Error).message}`);
  }
  if (checkpoint.origin !== key.name) {
    throw new Misbehaviour(`the checkpoint is of log ${checkpoint.origin}, not ${key.name}`);
  }
  const { state, mirror } = await loadState(dir);
  const seen = state?.size ?? 0;
  if (state && state.origin !== checkpoint.origin) {
    throw new Error(`${dir} holds the mirror of another log (${state.origin})`);
  }
  if (checkpoint.size < seen) {
    throw new Misbehaviour(
      `fork: the log shrank from size ${seen} (seen before) to ${checkpoint.size}`,
    );
  }
  const peaks: Peak[] = (state?.peaks ?? []).map((p) => ({
    ...p,
    hash: Buffer.from(p.hash, 'base64'),
  }));
  if (seen > 0) {
    // The partial bundle mirrored last time must come back unchanged.
    const start = seen - (seen % TILE_WIDTH);
    const again = await entries(prefix, start, seen);
    again.forEach((entry, i) => {
      const mirrored = mirror.subarray((start + i) * 32, (start + i) * 32 + 32);
      if (!entry.equals(mirrored)) {
        throw new Misbehaviour(
          `entry ${start + i} was rewritten: mirrored ${mirrored.toString('hex')}, now served ${entry.toString('hex')}`,
        );
      }
    });
  }
  const fresh = await entries(prefix, seen, checkpoint.size);
  fresh.forEach((entry, i) => pushLeaf(peaks, seen + i, leafHash(entry)));
  if (!peaksRoot(peaks).equals(checkpoint.rootHash)) {
    const reason =
      seen > 0 ? await firstRewritten(prefix, mirror, seen) : 'its entries do not hash to its root';
    throw new Misbehaviour(`fork at size ${checkpoint.size}: ${reason}`);
  }
  const { text, signatures } = splitNote(note);
  const missing = witnesses.filter((w) => cosignatureTime(text, signatures, w) === null);
  await mkdir(dir, { recursive: true });
  await appendFile(join(dir, 'entries'), Buffer.concat(fresh));
  const next: State = {
    origin: checkpoint.origin,
    size: checkpoint.size,
    rootHash: checkpoint.rootHash.toString('base64'),
    peaks: peaks.map((p) => ({ level: p.level, index: p.index, hash: p.hash.toString('base64') })),
  };
  await writeFile(join(dir, 'state.json'), JSON.stringify(next));
  await writeFile(join(dir, 'checkpoint'), note);
  if (missing.length) {
    throw new Misbehaviour(
      `checkpoint size ${checkpoint.size} lacks the cosignature of ${missing.map((w) => w.name).join(', ')}`,
    );
  }
  return (
    `OK: ${checkpoint.origin} size ${checkpoint.size}` +
    (seen ? `, extends size ${seen} seen before` : '') +
    `; ${fresh.length} new entries mirrored` +
    (witnesses.length ? `; cosigned by ${witnesses.map((w) => w.name).join(', ')}` : '')
  );
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: {
      'public-key': { type: 'string' },
      witness: { type: 'string', multiple: true },
      state: { type: 'string', default: '.evidence-monitor' },
      every: { type: 'string' },
    },
    allowPositionals: true,
  });
  const base = positionals[0];
  if (!base || !values['public-key'] || positionals.length > 1) {
    console.error(
      'usage: evidence-monitor <base url> --public-key <vkey or file> [--witness <vkey or file> …] [--state <dir>] [--every <seconds>]',
    );
    return 2;
  }
  const options: Options = {
    prefix: `${base.replace(/\/+$/, '')}/log`,
    key: parseVerifier(keyArg(values['public-key'])),
    witnesses: (values.witness ?? []).map((w) => parseCosignerKey(keyArg(w))),
    dir: values.state,
  };
  const every = values.every === undefined ? null : Number(values.every);
  if (every !== null && !(every > 0)) {
    console.error('--every: a number of seconds');
    return 2;
  }
  for (;;) {
    try {
      console.log(await check(options));
    } catch (err) {
      if (!(err instanceof Misbehaviour)) throw err;
      console.log(`FAILED: ${err.message}`);
      return 1;
    }
    if (every === null) return 0;
    await sleep(every * 1000);
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    console.error(`cannot monitor: ${(err as Error).message}`);
    process.exitCode = 2;
  },
);
