import { randomBytes } from 'node:crypto';
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
