import { createHash } from 'node:crypto';
import { z } from 'zod';
import { pooledRandomBytes } from '../random-bytes';
import { canonicalJson, type JsonObject, type JsonValue } from './seal';

/**
 * Personal values in sealed evidence are never sealed themselves: the sealed data holds a salted
 * digest in their place (`{"personal_sha256": …}`), and the value with its salt (the "opening") is
 * kept beside the record, outside the content hash, encrypted under the key of the person it is
 * about (data-keys.ts). Destroying that key (privacy erasure) leaves the digest: every content
 * hash, link, leaf and promise still verifies, and nothing can be read back. See docs/evidence.md.
 */

/** A personal field: where it is in the data, and whose data it is (the log's own account by default). */
interface PersonalPath {
  path: string[];
  /** Where the data names the account the value belongs to, when that is not the log's account. */
  subjectAt?: string[];
}

/**
 * Which fields of which kinds are personal. A canary hit's source (address, user agent, mail
 * server, resolver) may be the user's own (testing a canary) or an attacker's: it is kept for the
 * account's alerts and evidence, so it goes with the account. A delivery error can quote a
 * channel's target (an address, a URL). An admin record's operator email is the operator's.
 */
const POLICY: { kind: string | RegExp; fields: PersonalPath[] }[] = [
  {
    kind: 'threat.hit',
    fields: [['ip'], ['user_agent'], ['mail_server'], ['resolver']].map((path) => ({ path })),
  },
  { kind: 'audit.delivery.outcome', fields: [{ path: ['error'] }] },
  {
    kind: /^audit\.admin\./,
    fields: [{ path: ['operator', 'email'], subjectAt: ['operator', 'account_id'] }],
  },
];

export const COMMITMENT_FIELD = 'personal_sha256';

/** A personal value and the salt its digest was made with: enough for anyone to check the digest. */
export const openingView = z.object({
  /** Dotted path of the field in the record's data. */
  path: z.string(),
  salt: z.string(),
  value: z.unknown(),
});
export type Opening = z.output<typeof openingView>;

/** An opening still to be stored, with the account whose key encrypts it. */
export interface SubjectOpening extends Opening {
  subject: string;
}

function fieldsOf(kind: string): PersonalPath[] {
  return POLICY.filter((p) =>
    typeof p.kind === 'string' ? p.kind === kind : p.kind.test(kind),
  ).flatMap((p) => p.fields);
}

function at(data: JsonValue | undefined, path: readonly string[]): JsonValue | undefined {
  let node = data;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
    node = node[key];
  }
  return node;
}

function parentOf(data: JsonObject, path: readonly string[]): JsonObject | undefined {
  const parent = at(data, path.slice(0, -1));
  return typeof parent === 'object' && parent !== null && !Array.isArray(parent)
    ? parent
    : undefined;
}

export function commitment(salt: string, value: unknown): string {
  return createHash('sha256').update(canonicalJson({ salt, value })).digest('hex');
}

/**
 * The data to seal (each present personal value replaced by its salted digest) and the openings
 * to keep beside it. Absent and null values are not personal and stay as they are.
 */
export function commitPersonal(
  accountId: string,
  kind: string,
  data: JsonObject,
): { sealed: JsonObject; openings: SubjectOpening[] } {
  const fields = fieldsOf(kind);
  if (!fields.length) return { sealed: data, openings: [] };
  const sealed = structuredClone(data);
  const openings: SubjectOpening[] = [];
  for (const { path, subjectAt } of fields) {
    const value = at(sealed, path);
    if (value === undefined || value === null) continue;
    const salt = pooledRandomBytes(16).toString('base64url');
    parentOf(sealed, path)![path.at(-1)!] = { [COMMITMENT_FIELD]: commitment(salt, value) };
    const subject = subjectAt ? at(data, subjectAt) : accountId;
    openings.push({
      path: path.join('.'),
      salt,
      value,
      subject: typeof subject === 'string' ? subject : accountId,
    });
  }
  return { sealed, openings };
}

/** Whether sealed data still holds a personal value in the clear (sealed before this scheme). */
export function holdsPlainPersonal(kind: string, data: JsonObject): boolean {
  return fieldsOf(kind).some(({ path }) => {
    const value = at(data, path);
    return value !== undefined && value !== null && !isCommitment(value);
  });
}

function isCommitment(value: JsonValue | undefined): value is { [COMMITMENT_FIELD]: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof value[COMMITMENT_FIELD] === 'string'
  );
}

/** The data as a person reads it: each opened value back in place of its digest. */
export function withOpenings(data: JsonObject, openings: readonly Opening[]): JsonObject {
  if (!openings.length) return data;
  const readable = structuredClone(data);
  for (const { path, value } of openings) {
    const parts = path.split('.');
    const parent = parentOf(readable, parts);
    if (parent) parent[parts.at(-1)!] = value as JsonValue;
  }
  return readable;
}

/** Why an opening does not match the digest sealed at its path, or null when it does. */
export function openingFailure(data: JsonObject, opening: Opening): string | null {
  const sealed = at(data, opening.path.split('.'));
  if (!isCommitment(sealed)) return `its data has no personal digest at ${opening.path}`;
  return sealed[COMMITMENT_FIELD] === commitment(opening.salt, opening.value)
    ? null
    : `its personal value at ${opening.path} does not match the sealed digest`;
}
