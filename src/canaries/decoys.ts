import { createHash, randomBytes } from 'node:crypto';

export type { CanaryKind } from './kinds';

/**
 * What a canary is made of, whatever its kind (`./kinds/`): credentials look exactly like the real
 * thing, so an attacker who finds one tries it; each carries one or more *tokens*: the strings whose
 * appearance fires the canary.
 */
export interface Decoy {
  /** What the user plants: the credential, the URL or the address. */
  value: string;
  /** For a credential pair, the second half (the AWS secret key). */
  secret?: string;
  /** Files to plant as they are (the cloud key's profile), each with where it belongs. */
  files?: DecoyFile[];
  /** Strings that fire the canary when presented; stored only as digests. */
  tokens: string[];
}

export interface DecoyFile {
  path: string;
  content: string;
}

export interface DecoySettings {
  /** Base of the public tripwire listener: `/r/<token>`, the decoy AWS and Kubernetes APIs. */
  publicBaseUrl: string;
  decoyEmailDomain: string;
  /** The zone this service answers for: DNS canaries are `<token>.<zone>`. */
  dnsDomain: string;
  /** Host name (or address) an attacker reaches the decoy Postgres listener at, and its port. */
  publicHost: string;
  postgresPort: number;
  /** The WireGuard decoy endpoint's public key and port; absent when it is not configured. */
  wireguard?: { publicKey: string; port: number };
}

export const AWS_ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
export const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** A rag document marker as it appears in text: found again in messages and leak reports. */
export const RAG_MARKER_PATTERN = /\bref-[a-z2-7]{22}\b/g;

export function randomFrom(alphabet: string, length: number): string {
  // Every alphabet here has 32 characters, so a byte modulo 32 is uniform.
  return [...randomBytes(length)].map((b) => alphabet[b % alphabet.length]).join('');
}

/** The digest a token is stored and looked up by: presented strings are hashed the same way. */
export function tokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** URL tokens and addresses get a prefix, so a path segment never matches a credential token. */
export function urlToken(pathToken: string): string {
  return `url:${pathToken}`;
}

export function emailToken(address: string): string {
  return `email:${address.toLowerCase()}`;
}

/** A Postgres user name is a token too, but never matches a password or key presented elsewhere. */
export function postgresUserToken(user: string): string {
  return `pg-user:${user}`;
}

/** The label just left of the zone, as DNS compares it (case-insensitively). */
export function dnsToken(label: string): string {
  return `dns:${label.toLowerCase()}`;
}

/** The public tripwire base without a trailing slash, for paths below it. */
export const trimmedBase = (settings: DecoySettings) => settings.publicBaseUrl.replace(/\/+$/, '');

/** A fresh URL tripwire below `route` of the public listener (`r` for plain links) and its token. */
export function newTripwireUrl(
  settings: DecoySettings,
  route = 'r',
): { url: string; token: string } {
  const path = randomBytes(18).toString('base64url');
  return { url: `${trimmedBase(settings)}/${route}/${path}`, token: urlToken(path) };
}

/** A fresh hostname in the canary zone (any name below it fires too) and its token. */
export function newDnsName(settings: DecoySettings): { name: string; token: string } {
  const label = randomFrom(BASE32, 20);
  return { name: `${label}.${settings.dnsDomain}`, token: dnsToken(label) };
}
