import { LRUCache } from 'lru-cache';
import { leafHash } from './merkle';
import type { MerkleTreeStore } from './log-tree';

/**
 * The Merkle log as C2SP tlog-tiles (https://c2sp.org/tlog-tiles): tile `L/N` holds the hashes of
 * the 256 subtrees of 256^L leaves each from index N·256 (level 0: the leaf hashes); entry bundle
 * `N` holds the same 256 leaves' entries. An entry is the 32 raw bytes of a record's content hash
 * (its leaf hash is RFC 9162's over them, see LEAF_RULE), which the public hash check already
 * answers for: no owner, no content, no ids.
 */

export const TILE_WIDTH = 256;
/** Tree levels per tile level. */
const TILE_HEIGHT = 8;
const HASH_SIZE = 32;

export interface TileRef {
  /** A tile level 0–63, or 'entries' for an entry bundle. */
  level: number | 'entries';
  index: number;
  /** 256 for a full tile, 1–255 for a partial one. */
  width: number;
}

/** Parses what follows `/tile/`: `<L>/<N>[.p/<W>]` or `entries/<N>[.p/<W>]`, N in x-prefixed triplets. */
export function parseTilePath(path: string): TileRef | null {
  const match = /^(entries|0|[1-9]\d?)\/((?:x\d{3}\/)*\d{3})(?:\.p\/([1-9]\d{0,2}))?$/.exec(path);
  if (!match) return null;
  const level = match[1] === 'entries' ? 'entries' : Number(match[1]);
  const width = match[3] ? Number(match[3]) : TILE_WIDTH;
  const index = Number(match[2]!.replaceAll('x', '').replaceAll('/', ''));
  const canonical = tileIndexPath(index);
  if (level !== 'entries' && level > 63) return null;
  if (width > TILE_WIDTH || (match[3] && width === TILE_WIDTH) || canonical !== match[2])
    return null;
  if (!Number.isSafeInteger(index)) return null;
  return { level, index, width };
}

/** `1234067` → `x001/x234/067`. */
export function tileIndexPath(index: number): string {
  const groups: string[] = [];
  let n = index;
  do {
    groups.unshift(String(n % 1000).padStart(3, '0'));
    n = Math.floor(n / 1000);
  } while (n > 0);
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/');
}

export function tilePath({ level, index, width }: TileRef): string {
  return `tile/${level}/${tileIndexPath(index)}${width < TILE_WIDTH ? `.p/${width}` : ''}`;
}

/** An entry bundle: each entry as a big-endian uint16 length, then its bytes. */
export function entryBundle(entries: readonly Buffer[]): Buffer {
  return Buffer.concat(
    entries.flatMap((e) => [Buffer.of(e.length >> 8, e.length & 0xff), e] as Buffer[]),
  );
}

/** The entries of a bundle; throws when it is malformed. */
export function parseEntryBundle(bundle: Buffer): Buffer[] {
  const entries: Buffer[] = [];
  for (let at = 0; at < bundle.length;) {
    if (at + 2 > bundle.length) throw new Error('entry bundle: truncated length');
    const length = bundle.readUInt16BE(at);
    if (at + 2 + length > bundle.length) throw new Error('entry bundle: truncated entry');
    entries.push(bundle.subarray(at + 2, at + 2 + length));
    at += 2 + length;
  }
  return entries;
}

/**
 * Answers tiles and entry bundles from the stored tree. A tile's content, partial ones included
 * (a partial tile is its width's first hashes), never changes once its subtrees exist, so tiles
 * are cached here and by anyone downstream; a resource whose subtrees are not all stored yet is
 * not found.
 */
export class LogTiles {
  private readonly cache = new LRUCache<string, Buffer>({ max: 2_048 });

  constructor(private readonly tree: MerkleTreeStore) {}

  async read(ref: TileRef): Promise<Buffer | null> {
    const key = tilePath(ref);
    const cached = this.cache.get(key);
    if (cached) return cached;
    const body = await this.compute(ref);
    if (body) this.cache.set(key, body);
    return body;
  }

  private async compute({ level, index, width }: TileRef): Promise<Buffer | null> {
    const start = index * TILE_WIDTH;
    if (level === 'entries' || level === 0) {
      const hashes = await this.tree.leafContentHashes(start, width);
      if (hashes.length < width) return null;
      return level === 'entries' ? entryBundle(hashes) : Buffer.concat(hashes.map(leafHash));
    }
    const hashes = await this.tree.nodeHashes(level * TILE_HEIGHT, start, width);
    if (hashes.length < width) return null;
    return Buffer.concat(hashes, width * HASH_SIZE);
  }
}
