import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Key value `svc_<id>_<secret>`: the id is public (it names the key in URLs and lists), the secret
 * is 32 random bytes, base64url. Only a SHA-256 digest of the secret is stored: the secret has full
 * entropy, so a slow password hash would add latency to every request and no security.
 */
const KEY_SHAPE = /^svc_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$/;
const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export interface ParsedApiKey {
  keyId: string;
  secret: string;
}

export interface NewApiKey extends ParsedApiKey {
  value: string;
  /** What lists show: `svc_<id>_` and the first 4 characters of the secret. */
  prefix: string;
  secretHash: string;
}

function randomKeyId(): string {
  // 36 divides 252 evenly, so rejecting bytes ≥ 252 keeps every character equally likely.
  let id = '';
  while (id.length < 12) {
    for (const byte of randomBytes(16)) {
      if (byte < 252 && id.length < 12) id += ID_ALPHABET[byte % 36];
    }
  }
  return id;
}

export function secretDigest(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function generateApiKey(): NewApiKey {
  const keyId = randomKeyId();
  const secret = randomBytes(32).toString('base64url');
  return {
    keyId,
    secret,
    value: `svc_${keyId}_${secret}`,
    prefix: `svc_${keyId}_${secret.slice(0, 4)}`,
    secretHash: secretDigest(secret),
  };
}

export function parseApiKey(value: string): ParsedApiKey | null {
  const match = KEY_SHAPE.exec(value);
  return match ? { keyId: match[1]!, secret: match[2]! } : null;
}

/** Constant-time comparison of the presented secret's digest with the stored one. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(secretDigest(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
