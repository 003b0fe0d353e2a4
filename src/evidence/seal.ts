import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

export const SEAL_ALGORITHM = 'sha256-jcs';

export type JsonValue =
  string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Everything the content hash covers. Owner, position and predecessor are sealed with the data. */
export interface SealedFields {
  logId: string;
  accountId: string;
  seq: number;
  kind: string;
  sealedAt: Date;
  prevHash: string | null;
  data: JsonObject;
}

/**
 * SHA-256 (hex) of the RFC 8785 canonical JSON of the sealed fields. The wire names are fixed here
 * once: changing them would change every hash, so they never follow code renames.
 */
export function contentHash(fields: SealedFields): string {
  const canonical = canonicalJson({
    v: 1,
    log_id: fields.logId,
    account_id: fields.accountId,
    seq: fields.seq,
    kind: fields.kind,
    sealed_at: fields.sealedAt.toISOString(),
    prev_hash: fields.prevHash,
    data: fields.data,
  });
  return createHash('sha256').update(canonical).digest('hex');
}

/** RFC 8785 (JSON Canonicalization Scheme): sorted keys, ECMAScript number forms, minimal escapes. */
export function canonicalJson(value: unknown): string {
  const canonical = canonicalize(value);
  if (canonical === undefined) throw new TypeError('value cannot be canonicalised');
  return canonical;
}

/**
 * The data as it will read back from the database: a JSON round trip drops `undefined`, turns
 * dates into strings and refuses what JSON cannot hold, so the hash sealed now is recomputable.
 */
export function toJsonObject(data: object): JsonObject {
  const copy: unknown = JSON.parse(JSON.stringify(data));
  if (typeof copy !== 'object' || copy === null || Array.isArray(copy)) {
    throw new TypeError('evidence data must be a JSON object');
  }
  return copy as JsonObject;
}
