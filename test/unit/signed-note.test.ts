import vectors from '../fixtures/signed-note-vectors.json';
import {
  checkpointText,
  generateSigner,
  openNote,
  parseCheckpoint,
  parseSigner,
  parseVerifier,
  signNote,
  verifierKey,
} from '../../src/evidence/log/signed-note';

describe('signed notes (golang.org/x/mod/sumdb/note vectors)', () => {
  it('when the published key signs the published text, then the published note, byte for byte', () => {
    const signer = parseSigner(vectors.skey);
    expect(verifierKey(signer)).toBe(vectors.vkey);
    expect(signNote(vectors.text, signer)).toBe(vectors.note);
  });

  it('when the published note is opened with its vkey, then its text comes back', () => {
    expect(openNote(vectors.note, [parseVerifier(vectors.vkey)])).toBe(vectors.text);
  });

  it('when one character of the text changed, then the signature does not verify', () => {
    const forged = vectors.note.replace('cryptography', 'cryptographY');
    expect(() => openNote(forged, [parseVerifier(vectors.vkey)])).toThrow(/does not verify/);
  });

  it('when the note is signed by another key only, then it is refused as untrusted', () => {
    const { signer } = generateSigner('PeterNeumann');
    const note = signNote(vectors.text, signer);
    expect(() => openNote(note, [parseVerifier(vectors.vkey)])).toThrow(
      /no signature by a trusted/,
    );
  });

  it('when keys are malformed or their id does not match, then they are refused', () => {
    expect(() =>
      parseVerifier('PeterNeumann+00000000+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'),
    ).toThrow(/id does not match/);
    expect(() => parseVerifier('nonsense')).toThrow(/not a verifier key/);
    expect(() => parseSigner(vectors.vkey)).toThrow(/not a signer key/);
  });
});

describe('tlog-checkpoint bodies', () => {
  it('when a checkpoint is written and read back, then origin, size and root survive', () => {
    const rootHash = Buffer.alloc(32, 7);
    const text = checkpointText({ origin: 'example.com/log', size: 42, rootHash });
    expect(text).toBe(`example.com/log\n42\n${rootHash.toString('base64')}\n`);
    expect(parseCheckpoint(text)).toEqual({ origin: 'example.com/log', size: 42, rootHash });
  });

  it('when a checkpoint body is malformed, then it is refused', () => {
    expect(() => parseCheckpoint('example.com/log\n-1\nAAAA\n')).toThrow(/not a checkpoint/);
  });
});
