import { createHash } from 'node:crypto';
import { checkInclusion } from '../../console/src/log-proof';
import type { LogPublicKey } from '../../console/src/types';
import { signPromise } from '../../src/evidence/log/inclusion-promise';
import { recordLeafHash } from '../../src/evidence/log/log-tree';
import { inclusionProof, nodeHash, rootHash, type Subtree } from '../../src/evidence/log/merkle';
import {
  checkpointText,
  fingerprint,
  generateSigner,
  signNote,
  verifierKey,
  type NoteSigner,
} from '../../src/evidence/log/signed-note';

/** The console's browser check (Web Crypto, here Node's) against what the server signs and proves. */
const hashes = Array.from({ length: 13 }, (_, i) =>
  createHash('sha256').update(`record ${i}`).digest('hex'),
);
const leaves = hashes.map(recordLeafHash);
const lookup = ({ level, index }: Subtree): Buffer =>
  level === 0
    ? leaves[index]!
    : nodeHash(
        lookup({ level: level - 1, index: 2 * index }),
        lookup({ level: level - 1, index: 2 * index + 1 }),
      );

function answers(signer: NoteSigner, leafIndex: number, size = leaves.length) {
  const checkpoint = signNote(
    checkpointText({ origin: signer.name, size, rootHash: rootHash(size, lookup) }),
    signer,
  );
  return {
    promise: signPromise(signer, {
      leafIndex,
      contentHash: hashes[leafIndex]!,
      sealedAt: new Date('2026-11-25T12:00:00Z'),
    }),
    inclusion: {
      leaf_index: leafIndex,
      tree_size: size,
      root_hash: rootHash(size, lookup).toString('hex'),
      proof: inclusionProof(leafIndex, size, lookup).map((p) => p.toString('hex')),
      checkpoint,
    },
  };
}

const keyOf = (signer: NoteSigner): LogPublicKey => ({
  origin: signer.name,
  vkey: verifierKey(signer),
  key_id: signer.keyId.toString('hex'),
  fingerprint_sha256: fingerprint(signer),
  algorithm: 'ed25519',
  leaf_rule: '',
});

const { signer } = generateSigner('tripwire.test/evidence');

describe('checkInclusion (the console, in the browser)', () => {
  it.each([0, 5, 8, 12])('when leaf %i is proven in a tree of 13, then it passes', async (leaf) => {
    await expect(
      checkInclusion(hashes[leaf]!, answers(signer, leaf), keyOf(signer)),
    ).resolves.toEqual({
      leafIndex: leaf,
      treeSize: 13,
      origin: signer.name,
      fingerprint: fingerprint(signer),
    });
  });

  it('when the leaf is the only one, then the empty proof passes', async () => {
    await expect(
      checkInclusion(hashes[0]!, answers(signer, 0, 1), keyOf(signer)),
    ).resolves.toMatchObject({
      treeSize: 1,
    });
  });

  it('when the promise is for another record, then it fails saying so', async () => {
    await expect(checkInclusion(hashes[4]!, answers(signer, 5), keyOf(signer))).rejects.toThrow(
      'the promise is for another record',
    );
  });

  it('when a proof step is altered, then the leaf is not in the checkpoint', async () => {
    const forged = answers(signer, 5);
    forged.inclusion.proof[1] = forged.inclusion.proof[1]!.replace(/^./, (c) =>
      c === '0' ? '1' : '0',
    );
    await expect(checkInclusion(hashes[5]!, forged, keyOf(signer))).rejects.toThrow(
      'leaf 5 is not in the signed checkpoint of size 13',
    );
  });

  // Another key of the same name has another key id: its signatures are not the log's.
  it('when another key signed the answers, then nothing is trusted', async () => {
    const other = generateSigner('tripwire.test/evidence').signer;
    await expect(checkInclusion(hashes[5]!, answers(other, 5), keyOf(signer))).rejects.toThrow(
      'no signature by the log key',
    );
    const renamed = generateSigner('another.log/evidence').signer;
    await expect(checkInclusion(hashes[5]!, answers(renamed, 5), keyOf(signer))).rejects.toThrow(
      'no signature by the log key',
    );
  });

  it('when the checkpoint is signed but altered, then its signature fails', async () => {
    const altered = answers(signer, 5);
    altered.inclusion.checkpoint = altered.inclusion.checkpoint.replace('\n13\n', '\n14\n');
    await expect(checkInclusion(hashes[5]!, altered, keyOf(signer))).rejects.toThrow(
      'does not verify',
    );
  });

  it('when no checkpoint covers the record yet, then it says to try again', async () => {
    const { promise } = answers(signer, 5);
    await expect(
      checkInclusion(hashes[5]!, { promise, inclusion: null }, keyOf(signer)),
    ).rejects.toThrow('no checkpoint covers the record yet');
  });
});
