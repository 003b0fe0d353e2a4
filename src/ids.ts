import { randomBytes } from 'node:crypto';

/** Opaque, URL-safe ids with a readable kind prefix, e.g. `usr_3q2X…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

/**
 * Ids that sort by creation time (12 hex digits of milliseconds, then randomness), so "newest
 * first" pages can use the id itself as the cursor.
 */
export function newTimeOrderedId(prefix: string, at: Date): string {
  const time = at.getTime().toString(16).padStart(12, '0');
  return `${prefix}_${time}${randomBytes(8).toString('hex')}`;
}
