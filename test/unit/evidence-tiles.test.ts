import { createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import { openPromise, signPromise, verifyPromise } from '../../src/evidence/log/inclusion-promise';
import { recordLeafHash } from '../../src/evidence/log/log-tree';
import { inclusionProof, nodeHash, rootHash } from '../../src/evidence/log/merkle';
import {
  checkpointText,
  cosignatureTime,
  cosignedMessage,
  generateSigner,
  keyId,
  parseCosignerKey,
  parseSignatureLines,
  signNote,
} from '../../src/evidence/log/signed-note';
import {
  entryBundle,
  parseEntryBundle,
  parseTilePath,
  tileIndexPath,
  tilePath,
} from '../../src/evidence/log/tiles';
import { parseWitnesses } from '../../src/evidence/log/witnesses';

describe('tile paths (C2SP tlog-tiles)', () => {
  it('when an index is encoded, then it is 3-digit groups with x on all but the last', () => {
    expect(tileIndexPath(0)).toBe('000');
    expect(tileIndexPath(1234067)).toBe('x001/x234/067');
    expect(tilePath({ level: 'entries', index: 1000, width: 12 })).toBe(
      'tile/entries/x001/000.p/12',
    );
  });

  it('when paths are parsed, then canonical ones round-trip and every other form is refused', () => {
    for (const path of ['0/000', '2/x001/x234/067.p/255', 'entries/x001/000']) {
      expect(`tile/${path}`).toBe(tilePath(parseTilePath(path)!));
    }
    for (const bad of [
      '0/1', // not zero-padded
      '0/x000/001', // a leading zero group
      '0/000.p/256', // partial as wide as a full tile
      '0/000.p/0',
      '0/000.p/01',
      '64/000', // above level 63
      '00/000',
      'entries/000/',
      '../000',
    ]) {
      expect(parseTilePath(bad)).toBeNull();
    }
  });

  it('when entries are bundled, then each carries its 2-byte length and a cut bundle is refused', () => {
    const entries = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)];
    const bundle = entryBundle(entries);
    expect(bundle).toHaveLength(68);
    expect(bundle.readUInt16BE(34)).toBe(32);
    expect(parseEntryBundle(bundle)).toEqual(entries);
    expect(() => parseEntryBundle(bundle.subarray(0, 50))).toThrow('truncated entry');
  });
});

/** A witness key pair, signing as C2SP tlog-cosignature says (what litewitness does). */
function witness(name: string) {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
  const vkey = `${name}+${keyId(name, raw, 0x04).toString('hex')}+${Buffer.concat([Buffer.of(0x04), raw]).toString('base64')}`;
  const cosign = (body: string, time: number) => {
    const stamp = Buffer.alloc(8);
    stamp.writeBigUInt64BE(BigInt(time));
    const signature = sign(null, cosignedMessage(body, time), privateKey);
    const blob = Buffer.concat([keyId(name, raw, 0x04), stamp, signature]).toString('base64');
    return `— ${name} ${blob}\n`;
  };
  return { vkey, cosign, publicKey: createPublicKey(privateKey) };
}

describe('cosignatures (C2SP tlog-cosignature)', () => {
  const body = checkpointText({ origin: 'example.test/log', size: 5, rootHash: Buffer.alloc(32) });

  it("when a witness cosigned the checkpoint, then its time is read and verified with the witness's key", () => {
    const w = witness('witness.test/w1');
    const lines = parseSignatureLines(w.cosign(body, 1_700_000_000));
    expect(cosignatureTime(body, lines, parseCosignerKey(w.vkey))).toBe(1_700_000_000);
  });

  it('when the cosignature is over another checkpoint, by another key or a log key, then it does not count', () => {
    const w = witness('witness.test/w1');
    const other = witness('witness.test/w1');
    const key = parseCosignerKey(w.vkey);
    const otherBody = body.replace('\n5\n', '\n6\n');
    expect(cosignatureTime(body, parseSignatureLines(w.cosign(otherBody, 1)), key)).toBeNull();
    expect(cosignatureTime(body, parseSignatureLines(other.cosign(body, 1)), key)).toBeNull();
    const log = generateSigner('witness.test/w1').signer;
    const logLine = signNote(body, log).slice(body.length + 1);
    expect(cosignatureTime(body, parseSignatureLines(logLine), key)).toBeNull();
  });

  it('when a key is a log key rather than a cosigner key, then it is refused as a witness key', () => {
    const log = generateSigner('witness.test/w1').signer;
    const vkey = `${log.name}+${log.keyId.toString('hex')}+${Buffer.concat([Buffer.of(1), log.raw]).toString('base64')}`;
    expect(() => parseCosignerKey(vkey)).toThrow('not an Ed25519 cosignature/v1 (witness) key');
  });
});

describe('EVIDENCE_WITNESSES', () => {
  it('when entries are listed, then each names a key and a URL, and malformed ones are refused', () => {
    const a = witness('witness.test/a');
    const b = witness('witness.test/b');
    const parsed = parseWitnesses(`${a.vkey} https://a.test/w/, ${b.vkey} http://127.0.0.1:9`);
    expect(parsed.map((w) => [w.key.name, w.url])).toEqual([
      ['witness.test/a', 'https://a.test/w'],
      ['witness.test/b', 'http://127.0.0.1:9'],
    ]);
    expect(parseWitnesses(undefined)).toEqual([]);
    expect(() => parseWitnesses(a.vkey)).toThrow('a witness is "<vkey> <submission URL>"');
    expect(() => parseWitnesses(`${a.vkey} ftp://a.test`)).toThrow('http or https');
  });
});

describe('inclusion promises', () => {
  const { signer } = generateSigner('example.test/log');
  const hashes = Array.from({ length: 7 }, (_, i) => String(i).repeat(64));
  const leaves = hashes.map(recordLeafHash);
  const subtree = (level: number, index: number): Buffer =>
    level === 0
      ? leaves[index]!
      : nodeHash(subtree(level - 1, 2 * index), subtree(level - 1, 2 * index + 1));
  const lookup = ({ level, index }: { level: number; index: number }) => subtree(level, index);
  const root = rootHash(7, lookup);
  const checkpoint = signNote(
    checkpointText({ origin: signer.name, size: 7, rootHash: root }),
    signer,
  );
  const promise = signPromise(signer, {
    leafIndex: 4,
    contentHash: hashes[4]!,
    sealedAt: new Date('2026-11-25T10:00:00Z'),
  });
  const inclusion = {
    leaf_index: 4,
    proof: inclusionProof(4, 7, lookup).map((p) => p.toString('hex')),
    checkpoint,
  };

  it('when a promise is signed, then it opens to its fields and is the same bytes when made again', () => {
    expect(openPromise(promise.note, [signer])).toEqual({
      log_id: promise.log_id,
      leaf_index: 4,
      leaf_hash: leaves[4]!.toString('base64'),
      timestamp: '2026-11-25T10:00:00.000Z',
    });
    expect(
      signPromise(signer, {
        leafIndex: 4,
        contentHash: hashes[4]!,
        sealedAt: new Date('2026-11-25T10:00:00Z'),
      }),
    ).toEqual(promise);
  });

  it('when the later checkpoint includes the leaf, then the promise verifies against it', () => {
    expect(verifyPromise(promise.note, hashes[4]!, inclusion, [signer])).toMatchObject({
      ok: true,
      line: expect.stringMatching(
        /^VERIFIED: leaf 4 .* included in checkpoint example.test\/log size 7$/,
      ),
    });
  });

  it('when the promise is for another record, another key, or a checkpoint passed off as one, then it fails', () => {
    expect(verifyPromise(promise.note, hashes[3]!, inclusion, [signer]).line).toMatch(
      'FAILED: the promise is for another record',
    );
    const other = generateSigner('example.test/log').signer;
    expect(verifyPromise(promise.note, hashes[4]!, null, [other]).line).toMatch(
      'FAILED: the promise: no signature by a trusted key',
    );
    expect(verifyPromise(checkpoint, hashes[4]!, null, [signer]).line).toBe(
      'FAILED: the promise: not an inclusion promise',
    );
  });

  it('when the checkpoint does not hold the promised leaf, then the log broke its promise', () => {
    const rewritten = { ...inclusion, proof: inclusion.proof.map(() => '00'.repeat(32)) };
    expect(verifyPromise(promise.note, hashes[4]!, rewritten, [signer]).line).toBe(
      'FAILED: the log broke its promise: leaf 4 is not in checkpoint example.test/log size 7',
    );
    const smaller = signNote(
      checkpointText({ origin: signer.name, size: 4, rootHash: rootHash(4, lookup) }),
      signer,
    );
    expect(
      verifyPromise(promise.note, hashes[4]!, { ...inclusion, checkpoint: smaller }, [signer]).line,
    ).toBe('FAILED: the checkpoint of size 4 does not hold the promised leaf 4');
  });
});
