import { createHash, randomBytes } from 'node:crypto';
import { generateApiKey } from '../keys/api-key-format';

/**
 * What can be planted. Credentials look exactly like the real thing, so an attacker who finds one
 * tries it; each carries one or more *tokens*: the strings whose appearance fires the canary.
 */
export const CANARY_KINDS = [
  'api_key',
  'aws_access_key',
  'database_url',
  'url',
  'email',
  'rag_marker',
] as const;
export type CanaryKind = (typeof CANARY_KINDS)[number];

export interface Decoy {
  /** What the user plants: the credential, the URL or the address. */
  value: string;
  /** For a credential pair, the second half (the AWS secret key). */
  secret?: string;
  /** Strings that fire the canary when presented; stored only as digests. */
  tokens: string[];
}

export interface DecoySettings {
  publicBaseUrl: string;
  decoyEmailDomain: string;
}

const AWS_ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** A rag document marker as it appears in text: found again in messages and leak reports. */
export const RAG_MARKER_PATTERN = /\bref-[a-z2-7]{22}\b/g;

function randomFrom(alphabet: string, length: number): string {
  // Every alphabet here has 32 characters, so a byte modulo 32 is uniform.
  return [...randomBytes(length)].map((b) => alphabet[b % alphabet.length]).join('');
}

/** The digest a token is stored and looked up by: presented strings are hashed the same way. */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function makeDecoy(kind: CanaryKind, settings: DecoySettings): Decoy {
  switch (kind) {
    case 'api_key': {
      const { value } = generateApiKey();
      return { value, tokens: [value] };
    }
    case 'aws_access_key': {
      const id = `AKIA${randomFrom(AWS_ID_ALPHABET, 16)}`;
      const secret = randomBytes(30).toString('base64').slice(0, 40);
      return { value: id, secret, tokens: [id, secret] };
    }
    case 'database_url': {
      const user = `svc_${randomFrom(BASE32, 6)}`;
      const password = randomBytes(18).toString('base64url');
      const host = `db-${randomFrom(BASE32, 8)}.internal`;
      return {
        value: `postgres://${user}:${password}@${host}:5432/production`,
        tokens: [password],
      };
    }
    case 'url': {
      const token = randomBytes(18).toString('base64url');
      const url = `${settings.publicBaseUrl.replace(/\/+$/, '')}/r/${token}`;
      return { value: url, tokens: [urlToken(token)] };
    }
    case 'rag_marker': {
      const marker = `ref-${randomFrom(BASE32, 22)}`;
      return { value: marker, tokens: [marker] };
    }
    case 'email': {
      const local = `${randomFrom(BASE32, 6)}.${randomFrom(BASE32, 6)}`;
      const address = `${local}@${settings.decoyEmailDomain}`;
      return { value: address, tokens: [emailToken(address)] };
    }
  }
}

/** URL tokens and addresses get a prefix, so a path segment never matches a credential token. */
export function urlToken(pathToken: string): string {
  return `url:${pathToken}`;
}

export function emailToken(address: string): string {
  return `email:${address.toLowerCase()}`;
}
