import { createHash } from 'node:crypto';

/**
 * RFC 9162 (Certificate Transparency 2.0) Merkle tree hashing and proofs, SHA-256. No maintained
 * TypeScript package generates RFC 9162 inclusion and consistency proofs from stored subtrees
 * (sigstore's verifiers check inclusion only, and not as an exported API), so this file does; it is
 * tested against the transparency-dev/merkle vectors (test/unit/merkle.test.ts).
 *
 * A subtree is addressed as (level, index): the 2^level leaves from index·2^level. Proofs are
 * computed from complete subtrees only, so a store that keeps each complete subtree's hash answers
 * any proof with O(log n) reads, made at once (see `neededSubtrees`).
 */

export const EMPTY_ROOT = createHash('sha256').digest();

export function leafHash(entry: Buffer): Buffer {
  return createHash('sha256').update(Buffer.of(0)).update(entry).digest();
}

export function nodeHash(left: Buffer, right: Buffer): Buffer {
  return createHash('sha256').update(Buffer.of(1)).update(left).update(right).digest();
}

export interface Subtree {
  level: number;
  index: number;
}

/** Answers a complete subtree's hash; proofs ask only for subtrees inside the tree they prove. */
export type SubtreeLookup = (subtree: Subtree) => Buffer;

/** The largest power of two strictly below n (n ≥ 2): RFC 9162's split point k. */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

const isPowerOfTwo = (n: number) => n > 0 && (n & (n - 1)) === 0;
const log2 = (n: number) => Math.round(Math.log2(n));

/** MTH(D[start:end]), where start is aligned as every range in RFC 9162's recursion is. */
export function rangeHash(start: number, end: number, lookup: SubtreeLookup): Buffer {
  const n = end - start;
  if (isPowerOfTwo(n)) return lookup({ level: log2(n), index: start / n });
  const k = split(n);
  return nodeHash(rangeHash(start, start + k, lookup), rangeHash(start + k, end, lookup));
}

export function rootHash(size: number, lookup: SubtreeLookup): Buffer {
  return size === 0 ? EMPTY_ROOT : rangeHash(0, size, lookup);
}

/** RFC 9162 §2.1.3.1: PATH(m, D[0:n]), leaf first. */
export function inclusionProof(leafIndex: number, size: number, lookup: SubtreeLookup): Buffer[] {
  if (leafIndex < 0 || leafIndex >= size) throw new RangeError('leaf index outside the tree');
  const path = (start: number, end: number): Buffer[] => {
    const n = end - start;
    if (n === 1) return [];
    const k = split(n);
    return leafIndex - start < k
      ? [...path(start, start + k), rangeHash(start + k, end, lookup)]
      : [...path(start + k, end), rangeHash(start, start + k, lookup)];
  };
  return path(0, size);
}

/** RFC 9162 §2.1.4.1: PROOF(m, D[0:n]) for 0 < m ≤ n. */
export function consistencyProof(first: number, second: number, lookup: SubtreeLookup): Buffer[] {
  if (first < 1 || first > second) throw new RangeError('sizes must satisfy 0 < first ≤ second');
  const subproof = (m: number, start: number, end: number, whole: boolean): Buffer[] => {
    const n = end - start;
    if (m === n) return whole ? [] : [rangeHash(start, end, lookup)];
    const k = split(n);
    return m <= k
      ? [...subproof(m, start, start + k, whole), rangeHash(start + k, end, lookup)]
      : [...subproof(m - k, start + k, end, false), rangeHash(start, start + k, lookup)];
  };
  return subproof(first, 0, second, true);
}

/**
 * The complete subtrees a computation reads, found by running it once against placeholder hashes
 * (proofs are pure functions of sizes and indexes), so a store can fetch them in one round trip.
 */
export function neededSubtrees(compute: (lookup: SubtreeLookup) => unknown): Subtree[] {
  const seen = new Map<string, Subtree>();
  const placeholder = Buffer.alloc(32);
  compute((s) => {
    seen.set(subtreeKey(s), s);
    return placeholder;
  });
  return [...seen.values()];
}

export const subtreeKey = ({ level, index }: Subtree) => `${level}/${index}`;

const lsb = (n: number) => n % 2 === 1;
const half = (n: number) => Math.floor(n / 2);

/** RFC 9162 §2.1.3.2. Sizes stay below 2^53, so plain numbers shift safely by halving. */
export function verifyInclusion(
  leafIndex: number,
  size: number,
  hash: Buffer,
  proof: readonly Buffer[],
  root: Buffer,
): boolean {
  if (leafIndex < 0 || leafIndex >= size) return false;
  let fn = leafIndex;
  let sn = size - 1;
  let r = hash;
  for (const p of proof) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!lsb(fn)) {
        while (!lsb(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && r.equals(root);
}

/** RFC 9162 §2.1.4.2, with equal sizes consistent only with an empty proof and equal roots. */
export function verifyConsistency(
  first: number,
  second: number,
  proof: readonly Buffer[],
  firstRoot: Buffer,
  secondRoot: Buffer,
): boolean {
  if (first < 1 || first > second) return false;
  if (first === second) return proof.length === 0 && firstRoot.equals(secondRoot);
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof];
  let fn = first - 1;
  let sn = second - 1;
  while (lsb(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!lsb(fn)) {
        while (!lsb(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return fr.equals(firstRoot) && sr.equals(secondRoot) && sn === 0;
}

/**
 * The hashes of the complete subtrees that make up a tree of `size` leaves, largest first (its
 * "peaks"): where an integrator that appends leaves one by one resumes.
 */
export function peaks(size: number): Subtree[] {
  const out: Subtree[] = [];
  let start = 0;
  for (let level = 52; level >= 0; level--) {
    const width = 2 ** level;
    if (size - start >= width) {
      out.push({ level, index: start / width });
      start += width;
    }
  }
  return out;
}

/** A complete subtree with its hash: one entry of a compact range. */
export interface Peak extends Subtree {
  hash: Buffer;
}

/**
 * The compact range of a tree being built leaf by leaf: pushes the next leaf hash and merges equal
 * peaks, answering each interior node it completes (a store keeps them; a monitor need not).
 */
export function pushLeaf(peaks: Peak[], index: number, hash: Buffer): Peak[] {
  const made: Peak[] = [];
  peaks.push({ level: 0, index, hash });
  while (peaks.length > 1 && peaks.at(-1)!.level === peaks.at(-2)!.level) {
    const right = peaks.pop()!;
    const left = peaks.pop()!;
    const node = {
      level: left.level + 1,
      index: left.index / 2,
      hash: nodeHash(left.hash, right.hash),
    };
    peaks.push(node);
    made.push(node);
  }
  return made;
}

/** The root of the tree whose compact range these peaks are. */
export function peaksRoot(peaks: readonly Peak[]): Buffer {
  const root = peaks.reduceRight<Buffer | null>(
    (acc, peak) => (acc ? nodeHash(peak.hash, acc) : peak.hash),
    null,
  );
  return root ?? EMPTY_ROOT;
}
