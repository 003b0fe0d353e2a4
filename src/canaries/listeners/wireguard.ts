import {
  createDecipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  type KeyObject,
} from 'node:crypto';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import type { Logger } from '../../logger';
import type { Tripwires } from '../tripwires';

/**
 * The WireGuard decoy endpoint of planted configs. A client's first packet is a handshake
 * initiation (Noise IKpsk2): with this endpoint's static private key the listener follows the
 * handshake as far as the initiator's static public key, which names the planted config, and
 * fires. It never answers: a WireGuard server stays silent to any peer it does not accept, so a
 * planted config and any other get the same silence.
 */

const HANDSHAKE_INITIATION = 1;
const INITIATION_LENGTH = 148;
const CONSTRUCTION = 'Noise_IKpsk2_25519_ChaChaPoly_BLAKE2s';
const IDENTIFIER = 'WireGuard v1 zx2c4 Jason@zx2c4.com';
/** DER wrappers of raw X25519 keys, so node:crypto takes them. */
const PKCS8_X25519 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const SPKI_X25519 = Buffer.from('302a300506032b656e032100', 'hex');

const hash = (...parts: Buffer[]) => createHash('blake2s256').update(Buffer.concat(parts)).digest();
const hmac = (key: Buffer, ...parts: Buffer[]) =>
  createHmac('blake2s256', key).update(Buffer.concat(parts)).digest();
/** WireGuard's KDF2: HKDF with HMAC-BLAKE2s, two outputs. */
function kdf2(key: Buffer, input: Buffer): [Buffer, Buffer] {
  const prk = hmac(key, input);
  const first = hmac(prk, Buffer.from([1]));
  return [first, hmac(prk, first, Buffer.from([2]))];
}

const privateKeyOf = (raw: Buffer): KeyObject =>
  createPrivateKey({ key: Buffer.concat([PKCS8_X25519, raw]), format: 'der', type: 'pkcs8' });
const publicKeyOf = (raw: Buffer): KeyObject =>
  createPublicKey({ key: Buffer.concat([SPKI_X25519, raw]), format: 'der', type: 'spki' });
const rawPublicKey = (key: KeyObject): Buffer =>
  createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(SPKI_X25519.length);

/** The public key (base64, as WireGuard writes keys) of a base64 private key. */
export function wireguardPublicKey(privateKey: string): string {
  return rawPublicKey(privateKeyOf(Buffer.from(privateKey, 'base64'))).toString('base64');
}

/** A WireGuard key as a token: the client's public key, never matching another kind's string. */
export function wireguardToken(publicKey: string): string {
  return `wg:${publicKey}`;
}

/**
 * The initiator's static public key (base64) in a handshake initiation sent to the holder of
 * `privateKey`, or null when the message is not one (other types, wrong length, another server's).
 */
export function initiatorStaticKey(message: Buffer, privateKey: KeyObject): string | null {
  if (message.length !== INITIATION_LENGTH || message.readUInt32LE(0) !== HANDSHAKE_INITIATION) {
    return null;
  }
  const ephemeral = message.subarray(8, 40);
  const encryptedStatic = message.subarray(40, 88);
  let chain = hash(Buffer.from(CONSTRUCTION));
  let h = hash(chain, Buffer.from(IDENTIFIER));
  h = hash(h, rawPublicKey(privateKey));
  chain = hmac(hmac(chain, ephemeral), Buffer.from([1]));
  h = hash(h, ephemeral);
  let shared: Buffer;
  try {
    shared = diffieHellman({ privateKey, publicKey: publicKeyOf(ephemeral) });
  } catch {
    return null;
  }
  const [, key] = kdf2(chain, shared);
  const decipher = createDecipheriv('chacha20-poly1305', key, Buffer.alloc(12), {
    authTagLength: 16,
  });
  decipher.setAAD(h, { plaintextLength: 32 });
  decipher.setAuthTag(encryptedStatic.subarray(32));
  try {
    return Buffer.concat([
      decipher.update(encryptedStatic.subarray(0, 32)),
      decipher.final(),
    ]).toString('base64');
  } catch {
    return null;
  }
}

export interface WireguardListener {
  port: number;
  close(): Promise<void>;
}

export async function startWireguardListener(deps: {
  host: string;
  port: number;
  privateKey: string;
  tripwires: Tripwires;
  log: Logger;
}): Promise<WireguardListener> {
  const privateKey = privateKeyOf(Buffer.from(deps.privateKey, 'base64'));
  const udp = createSocket(deps.host.includes(':') ? 'udp6' : 'udp4');
  udp.on('message', (message, remote) => {
    const publicKey = initiatorStaticKey(message, privateKey);
    if (!publicKey) return;
    deps.tripwires
      .recordHit({
        secrets: [wireguardToken(publicKey)],
        via: 'wireguard',
        client: { ip: remote.address.replace(/^::ffff:/, ''), userAgent: '' },
      })
      // The client sends its initiation again every 5 s: a hit not handed over now comes back.
      .catch((err: unknown) => deps.log.error({ err }, 'WireGuard canary: hit not handed over'));
  });
  udp.on('error', (err) => deps.log.error({ err }, 'WireGuard listener error'));
  udp.bind(deps.port, deps.host);
  await once(udp, 'listening');
  return {
    port: udp.address().port,
    close: () => new Promise<void>((resolve) => udp.close(() => resolve())),
  };
}
