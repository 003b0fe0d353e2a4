import vectors from '../fixtures/rfc6962-vectors.json';
import {
  consistencyProof,
  EMPTY_ROOT,
  inclusionProof,
  leafHash,
  neededSubtrees,
  nodeHash,
  peaks,
  rangeHash,
  rootHash,
  verifyConsistency,
  verifyInclusion,
  type SubtreeLookup,
} from '../../src/evidence/log/merkle';

const hex = (h: string) => Buffer.from(h, 'hex');
const leaves = vectors.leaf_inputs.map((l) => leafHash(hex(l)));

/** An in-memory tree over the vector leaves: a complete subtree's hash by recursion. */
const lookup: SubtreeLookup = ({ level, index }) => {
  if (level === 0) return leaves[index]!;
  const left = lookup({ level: level - 1, index: 2 * index });
  const right = lookup({ level: level - 1, index: 2 * index + 1 });
  return nodeHash(left, right);
};
const root = (size: number) => hex(vectors.roots_by_size[size]!);

describe('RFC 9162 hashing (transparency-dev vectors)', () => {
  it('when leaves are hashed, then with the 0x00 prefix as published', () => {
    expect(leaves.map((l) => l.toString('hex'))).toEqual(vectors.leaf_hashes);
  });

  it('when the tree is 0 to 8 leaves, then every root matches', () => {
    expect(EMPTY_ROOT.toString('hex')).toBe(vectors.roots_by_size[0]);
    for (let size = 0; size <= 8; size++) {
      expect(rootHash(size, lookup).toString('hex')).toBe(vectors.roots_by_size[size]);
    }
  });

  it('when a root is computed, then it reads only complete subtrees: the peaks for the root', () => {
    expect(neededSubtrees((l) => rootHash(7, l))).toEqual(peaks(7));
    expect(peaks(7)).toEqual([
      { level: 2, index: 0 },
      { level: 1, index: 2 },
      { level: 0, index: 6 },
    ]);
  });
});

describe('inclusion proofs', () => {
  it.each(vectors.inclusion)(
    'when leaf $leaf_index of $size is proven, then the published path, and it verifies',
    ({ leaf_index, size, proof }) => {
      const made = inclusionProof(leaf_index, size, lookup);
      expect(made.map((p) => p.toString('hex'))).toEqual(proof);
      expect(verifyInclusion(leaf_index, size, leaves[leaf_index]!, made, root(size))).toBe(true);
    },
  );

  it('when any leaf of any size is proven, then it verifies against that root', () => {
    for (let size = 1; size <= 8; size++) {
      for (let i = 0; i < size; i++) {
        const proof = inclusionProof(i, size, lookup);
        expect(verifyInclusion(i, size, leaves[i]!, proof, root(size))).toBe(true);
      }
    }
  });

  it('when index, size, leaf, root or path is wrong, then it does not verify', () => {
    const proof = inclusionProof(5, 8, lookup);
    const ok = (i: number, n: number, leaf: Buffer, p: Buffer[], r: Buffer) =>
      verifyInclusion(i, n, leaf, p, r);
    expect(ok(4, 8, leaves[5]!, proof, root(8))).toBe(false);
    expect(ok(6, 8, leaves[5]!, proof, root(8))).toBe(false);
    expect(ok(5, 16, leaves[5]!, proof, root(8))).toBe(false);
    expect(ok(5, 4, leaves[5]!, proof, root(8))).toBe(false);
    expect(ok(5, 8, leaves[4]!, proof, root(8))).toBe(false);
    expect(ok(5, 8, leaves[5]!, proof, root(7))).toBe(false);
    expect(ok(5, 8, leaves[5]!, proof.slice(1), root(8))).toBe(false);
    expect(ok(5, 8, leaves[5]!, [...proof, root(8)], root(8))).toBe(false);
    const flipped = proof.map((p, i) =>
      i === 1 ? Buffer.from(p.map((b, j) => (j ? b : b ^ 8))) : p,
    );
    expect(ok(5, 8, leaves[5]!, flipped, root(8))).toBe(false);
    expect(ok(8, 8, leaves[5]!, proof, root(8))).toBe(false);
  });
});

describe('consistency proofs', () => {
  it.each(vectors.consistency)(
    'when $first is proven against $second, then the published path, and it verifies',
    ({ first, second, proof }) => {
      const made = consistencyProof(first, second, lookup);
      expect(made.map((p) => p.toString('hex'))).toEqual(proof);
      expect(verifyConsistency(first, second, made, root(first), root(second))).toBe(true);
    },
  );

  it('when any two sizes are proven, then it verifies; with roots swapped or a size off, not', () => {
    for (let second = 1; second <= 8; second++) {
      for (let first = 1; first <= second; first++) {
        const proof = consistencyProof(first, second, lookup);
        expect(verifyConsistency(first, second, proof, root(first), root(second))).toBe(true);
        if (first < second) {
          expect(verifyConsistency(first, second, proof, root(second), root(first))).toBe(false);
          expect(verifyConsistency(first, second, [], root(first), root(second))).toBe(false);
          if (first > 1) {
            expect(verifyConsistency(first - 1, second, proof, root(first), root(second))).toBe(
              false,
            );
          }
        }
      }
    }
  });

  it('when a tree was rewritten below an earlier size, then no proof from it verifies', () => {
    const forged = leaves.map((l, i) => (i === 1 ? leafHash(Buffer.from('forged')) : l));
    const rewritten: SubtreeLookup = ({ level, index }) =>
      level === 0
        ? forged[index]!
        : nodeHash(
            rewritten({ level: level - 1, index: 2 * index }),
            rewritten({ level: level - 1, index: 2 * index + 1 }),
          );
    const forgedRoot = rootHash(8, rewritten);
    const proof = consistencyProof(3, 8, rewritten);
    expect(verifyConsistency(3, 8, proof, root(3), forgedRoot)).toBe(false);
  });

  it('when ranges are split, then each is the hash the recursion defines', () => {
    expect(rangeHash(4, 6, lookup)).toEqual(lookup({ level: 1, index: 2 }));
  });
});
