import { createHash, randomBytes } from 'node:crypto';
import { v7 as uuidV7 } from 'uuid';

/** Opaque, URL-safe ids with a readable kind prefix, e.g. `usr_3q2X…`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}

/**
 * The same, ordered by creation time (a UUIDv7 after the prefix, e.g.
 * `evd_01a20d04-91ab-70d3-a933-0965b6ecf0d9`), for records written at a high rate: their `_id`s
 * land next to each other in the database's B-tree, so an insert touches the newest page instead
 * of a random one that must be read back from disk and rewritten whole at the next commit.
 */
export function newTimeOrderedId(prefix: string): string {
  return `${prefix}_${uuidV7()}`;
}

/**
 * An id derived from what it names (`seed`) and the instant it belongs to: the same arguments give
 * the same id, so a retried or replayed write lands on the one it made before, and ids of later
 * instants sort after earlier ones (the instant in milliseconds, 9 base-36 digits, then 16
 * characters of the seed's SHA-256), for the same reason as `newTimeOrderedId`.
 */
export function derivedTimeOrderedId(prefix: string, at: Date, seed: string): string {
  const time = at.getTime().toString(36).padStart(9, '0');
  const digest = createHash('sha256').update(seed).digest('base64url').slice(0, 16);
  return `${prefix}_${time}${digest}`;
}
