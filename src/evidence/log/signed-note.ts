import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';

/**
 * C2SP signed notes with Ed25519 (https://c2sp.org/signed-note), the format of golang.org/x/mod's
 * sumdb/note, and C2SP tlog-checkpoint bodies (https://c2sp.org/tlog-checkpoint). Keys use the
 * same text forms: `PRIVATE+KEY+<name>+<key id>+<base64(0x01 ‖ seed)>` for signing and
 * `<name>+<key id>+<base64(0x01 ‖ public key)>` (a "vkey") for verifying. Node's crypto signs.
 * Witnesses' cosignatures (https://c2sp.org/tlog-cosignature, Ed25519 `cosignature/v1`) are
 * verified here too, with witness vkeys of type 0x04.
 */

const ED25519 = 0x01;
/** C2SP tlog-cosignature: a witness's timestamped Ed25519 signature (cosignature/v1). */
const COSIGNATURE_V1 = 0x04;
const SIGNATURE_PREFIX = '— ';
// DER wrappers around a raw Ed25519 seed or public key, so Node's crypto can load them.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export interface NoteVerifier {
  name: string;
  keyId: Buffer;
  publicKey: KeyObject;
  /** The public key's raw 32 bytes. */
  raw: Buffer;
}

export interface NoteSigner extends NoteVerifier {
  privateKey: KeyObject;
}

const validName = (name: string) => name.length > 0 && !/[\s+]/.test(name);

/** The 4-byte key id: SHA-256(name ‖ "\n" ‖ type ‖ public key), first 4 bytes (type 0x01 by default). */
export function keyId(name: string, raw: Buffer, type = ED25519): Buffer {
  return createHash('sha256')
    .update(`${name}\n`)
    .update(Buffer.of(type))
    .update(raw)
    .digest()
    .subarray(0, 4);
}

function rawPublicKey(key: KeyObject): Buffer {
  return key.export({ format: 'der', type: 'spki' }).subarray(SPKI_PREFIX.length);
}

export function generateSigner(name: string): { signer: NoteSigner; skey: string } {
  if (!validName(name)) throw new TypeError('a key name has no spaces or +');
  const { privateKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(PKCS8_PREFIX.length);
  const raw = rawPublicKey(createPublicKey(privateKey));
  const id = keyId(name, raw).toString('hex');
  const skey = `PRIVATE+KEY+${name}+${id}+${Buffer.concat([Buffer.of(ED25519), seed]).toString('base64')}`;
  return { signer: parseSigner(skey), skey };
}

/** Reads `PRIVATE+KEY+<name>+<id>+<base64>`; throws naming what is wrong. */
export function parseSigner(skey: string): NoteSigner {
  const parts = skey.trim().split('+');
  if (parts.length < 5 || parts[0] !== 'PRIVATE' || parts[1] !== 'KEY') {
    throw new TypeError('not a signer key: expected PRIVATE+KEY+<name>+<key id>+<key>');
  }
  const [name, id] = [parts[2]!, parts[3]!];
  const key = Buffer.from(parts.slice(4).join('+'), 'base64');
  if (key.length !== 33 || key[0] !== ED25519) throw new TypeError('not an Ed25519 signer key');
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, key.subarray(1)]),
    format: 'der',
    type: 'pkcs8',
  });
  const publicKey = createPublicKey(privateKey);
  const raw = rawPublicKey(publicKey);
  if (keyId(name, raw).toString('hex') !== id) throw new TypeError('signer key id does not match');
  return { name, keyId: keyId(name, raw), publicKey, raw, privateKey };
}

/** Reads a vkey `<name>+<key id>+<base64(0x01 ‖ public key)>`. */
export function parseVerifier(vkey: string): NoteVerifier {
  return parseTypedVerifier(vkey, ED25519, 'an Ed25519 verifier key');
}

/** Reads a witness's vkey `<name>+<key id>+<base64(0x04 ‖ Ed25519 public key)>`. */
export function parseCosignerKey(vkey: string): NoteVerifier {
  return parseTypedVerifier(vkey, COSIGNATURE_V1, 'an Ed25519 cosignature/v1 (witness) key');
}

function parseTypedVerifier(vkey: string, type: number, what: string): NoteVerifier {
  const parts = vkey.trim().split('+');
  if (parts.length < 3) throw new TypeError('not a verifier key: expected <name>+<key id>+<key>');
  const [name, id] = [parts[0]!, parts[1]!];
  const key = Buffer.from(parts.slice(2).join('+'), 'base64');
  if (!validName(name) || key.length !== 33 || key[0] !== type) {
    throw new TypeError(`not ${what}`);
  }
  const raw = key.subarray(1);
  if (keyId(name, raw, type).toString('hex') !== id)
    throw new TypeError('verifier key id does not match');
  const publicKey = createPublicKey({
    key: Buffer.concat([SPKI_PREFIX, raw]),
    format: 'der',
    type: 'spki',
  });
  return { name, keyId: keyId(name, raw, type), publicKey, raw };
}

export function verifierKey(key: NoteVerifier): string {
  const encoded = Buffer.concat([Buffer.of(ED25519), key.raw]).toString('base64');
  return `${key.name}+${key.keyId.toString('hex')}+${encoded}`;
}

/** SHA-256 of the raw public key, hex: the fingerprint printed in reports. */
export function fingerprint(key: NoteVerifier): string {
  return createHash('sha256').update(key.raw).digest('hex');
}

export function signNote(text: string, signer: NoteSigner): string {
  if (!text.endsWith('\n')) throw new TypeError('a note text ends with a newline');
  const signature = sign(null, Buffer.from(text), signer.privateKey);
  const blob = Buffer.concat([signer.keyId, signature]).toString('base64');
  return `${text}\n${SIGNATURE_PREFIX}${signer.name} ${blob}\n`;
}

/**
 * The note's text when one of its signatures is by one of these keys and verifies; otherwise an
 * Error saying why. Signatures by other keys (witnesses, say) are ignored, as the format wants.
 */
export function openNote(note: string, keys: readonly NoteVerifier[]): string {
  const { text, signatures } = splitNote(note);
  for (const { name, bytes } of signatures) {
    const key = keys.find((k) => k.name === name && k.keyId.equals(bytes.subarray(0, 4)));
    if (!key) continue;
    if (!verify(null, Buffer.from(text), key.publicKey, bytes.subarray(4))) {
      throw new Error(`the signature by ${name} does not verify`);
    }
    return text;
  }
  throw new Error('no signature by a trusted key');
}

export interface NoteSignature {
  name: string;
  /** Key id, then the signature. */
  bytes: Buffer;
  /** The whole line, with its newline. */
  line: string;
}

/** A signed note's text (with its final newline) and its signature lines, in order. */
export function splitNote(note: string): { text: string; signatures: NoteSignature[] } {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new Error('not a signed note');
  const text = note.slice(0, split + 1);
  return { text, signatures: parseSignatureLines(note.slice(split + 2)) };
}

/** Note signature lines, each `— <name> <base64>` and a newline. */
export function parseSignatureLines(lines: string): NoteSignature[] {
  if (!lines.endsWith('\n')) throw new Error('malformed signature line');
  return lines
    .slice(0, -1)
    .split('\n')
    .map((line) => {
      if (!line.startsWith(SIGNATURE_PREFIX)) throw new Error('malformed signature line');
      const [name, blob, extra] = line.slice(SIGNATURE_PREFIX.length).split(' ');
      if (!name || !blob || extra !== undefined) throw new Error('malformed signature line');
      return { name, bytes: Buffer.from(blob, 'base64'), line: `${line}\n` };
    });
}

/** The message a cosignature/v1 signs: a header line, the time line, then the checkpoint body. */
export const cosignedMessage = (body: string, time: number) =>
  Buffer.from(`cosignature/v1\ntime ${time}\n${body}`);

/**
 * The time (POSIX seconds) of the witness's valid cosignature over this checkpoint body, or null
 * when none of these signatures is one by that witness key that verifies.
 */
export function cosignatureTime(
  body: string,
  signatures: readonly NoteSignature[],
  witness: NoteVerifier,
): number | null {
  for (const { name, bytes } of signatures) {
    if (name !== witness.name || !witness.keyId.equals(bytes.subarray(0, 4))) continue;
    if (bytes.length !== 4 + 8 + 64) continue;
    const time = Number(bytes.readBigUInt64BE(4));
    if (verify(null, cosignedMessage(body, time), witness.publicKey, bytes.subarray(12))) {
      return time;
    }
  }
  return null;
}

export interface Checkpoint {
  origin: string;
  size: number;
  rootHash: Buffer;
}

/** The C2SP tlog-checkpoint body: origin, decimal size, base64 root hash, each on its line. */
export function checkpointText({ origin, size, rootHash }: Checkpoint): string {
  return `${origin}\n${size}\n${rootHash.toString('base64')}\n`;
}

export function parseCheckpoint(text: string): Checkpoint {
  const [origin, size, root] = text.split('\n');
  const rootHash = Buffer.from(root ?? '', 'base64');
  if (!origin || !/^(0|[1-9]\d*)$/.test(size ?? '') || rootHash.length !== 32) {
    throw new Error('not a checkpoint: expected origin, size and base64 root hash lines');
  }
  return { origin, size: Number(size), rootHash };
}
