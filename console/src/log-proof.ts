/**
 * Checks, in the browser with Web Crypto alone, that a sealed record is in the evidence log: the
 * log's signed inclusion promise for its content hash, and the RFC 9162 inclusion proof of its
 * leaf against a checkpoint signed by the same key (C2SP signed notes, Ed25519). The same checks
 * as `verify-evidence --promise` (src/evidence/log/inclusion-promise.ts), on the server's answers.
 */
import type { LogPublicKey, Verification } from './types';

const PROMISE_HEADER = 'tripwire-evidence/inclusion-promise/v1';
const text = new TextEncoder();

const fromBase64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const fromHex = (h: string) => Uint8Array.from(h.match(/../g) ?? [], (b) => parseInt(b, 16));
const toHex = (bytes: Uint8Array) =>
  [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
const equal = (a: Uint8Array, b: Uint8Array) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

async function sha256(...parts: (Uint8Array | number[])[]): Promise<Uint8Array> {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', all));
}

interface LogKey {
  name: string;
  keyId: Uint8Array;
  key: Awaited<ReturnType<typeof crypto.subtle.importKey>>;
  /** SHA-256 of the raw public key, hex: the log id a promise names. */
  fingerprint: string;
}

/** A vkey `<name>+<key id>+<base64(0x01 ‖ Ed25519 public key)>`, its id checked. */
async function importLogKey(vkey: string): Promise<LogKey> {
  const [name = '', id = '', ...rest] = vkey.split('+');
  const bytes = fromBase64(rest.join('+'));
  if (bytes.length !== 33 || bytes[0] !== 1) throw new Error('the log key is not an Ed25519 key');
  const raw = bytes.slice(1);
  const keyId = (await sha256(text.encode(`${name}\n`), [1], raw)).slice(0, 4);
  if (toHex(keyId) !== id) throw new Error('the log key id does not match the key');
  const key = await crypto.subtle.importKey('raw', raw, { name: 'Ed25519' }, false, ['verify']);
  return { name, keyId, key, fingerprint: toHex(await sha256(raw)) };
}

/** The note's text when the log key signed it; throws otherwise. */
async function openNote(note: string, log: LogKey): Promise<string> {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new Error('not a signed note');
  const body = note.slice(0, split + 1);
  for (const line of note.slice(split + 2, -1).split('\n')) {
    const [name, blob] = line.replace(/^— /, '').split(' ');
    const bytes = fromBase64(blob ?? '');
    if (name !== log.name || !equal(bytes.slice(0, 4), log.keyId)) continue;
    if (await crypto.subtle.verify('Ed25519', log.key, bytes.slice(4), text.encode(body)))
      return body;
    throw new Error(`the signature by ${name} does not verify`);
  }
  throw new Error('no signature by the log key');
}

const nodeHash = (left: Uint8Array, right: Uint8Array) => sha256([1], left, right);

/** RFC 9162 §2.1.3.2: the root the proof leads to from this leaf, or null when it cannot. */
async function rootFromProof(index: number, size: number, leaf: Uint8Array, proof: Uint8Array[]) {
  if (index >= size) return null;
  // Arithmetic rather than bitwise operators: indexes may pass 2^31.
  let fn = index;
  let sn = size - 1;
  let hash = leaf;
  for (const sibling of proof) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      hash = await nodeHash(sibling, hash);
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else {
      hash = await nodeHash(hash, sibling);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? hash : null;
}

export interface ProofCheck {
  leafIndex: number;
  treeSize: number;
  origin: string;
  /** The log key's fingerprint (SHA-256, hex), to compare with the one the operator publishes. */
  fingerprint: string;
}

/** Throws an Error naming the first check that fails. */
export async function checkInclusion(
  contentHash: string,
  verification: Pick<Verification, 'promise' | 'inclusion'>,
  publicKey: LogPublicKey,
): Promise<ProofCheck> {
  const { promise, inclusion } = verification;
  if (!promise) throw new Error('the record has not reached the log yet');
  if (!inclusion) throw new Error('no checkpoint covers the record yet; try again shortly');
  const log = await importLogKey(publicKey.vkey);
  const [header, logId, index, leafB64, , end] = (await openNote(promise.note, log)).split('\n');
  if (header !== PROMISE_HEADER || end !== '' || !/^\d+$/.test(index ?? ''))
    throw new Error('the promise is not an inclusion promise');
  if (logId !== log.fingerprint) throw new Error('the promise names another log');
  const leaf = await sha256([0], fromHex(contentHash));
  if (!equal(fromBase64(leafB64 ?? ''), leaf)) throw new Error('the promise is for another record');
  const [origin = '', size = '', rootB64 = ''] = (await openNote(inclusion.checkpoint, log)).split(
    '\n',
  );
  const leafIndex = Number(index);
  const treeSize = Number(size);
  if (inclusion.leaf_index !== leafIndex) throw new Error('the proof is for another leaf');
  const root = await rootFromProof(leafIndex, treeSize, leaf, inclusion.proof.map(fromHex));
  if (!root || !equal(root, fromBase64(rootB64)))
    throw new Error(`leaf ${leafIndex} is not in the signed checkpoint of size ${treeSize}`);
  return { leafIndex, treeSize, origin, fingerprint: log.fingerprint };
}
