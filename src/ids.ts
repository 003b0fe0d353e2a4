import { randomBytes } from 'node:crypto';

/** Opaque, URL-safe ids with a readable kind prefix, e.g. `usr_3q2X…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}
