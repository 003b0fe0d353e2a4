import { createHash, randomBytes } from 'node:crypto';

/** 32 random bytes, URL-safe: the bearer token and the refresh cookie value. */
export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Only this digest is stored; a database leak yields no usable token. */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
