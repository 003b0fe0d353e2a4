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
  'dns',
  'kubeconfig',
] as const;
export type CanaryKind = (typeof CANARY_KINDS)[number];

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
      return { value: id, secret, files: awsProfile(id, secret, settings), tokens: [id, secret] };
    }
    case 'database_url': {
      const user = `svc_${randomFrom(BASE32, 10)}`;
      const password = randomBytes(18).toString('base64url');
      const { publicHost, postgresPort } = settings;
      return {
        value: `postgres://${user}:${password}@${publicHost}:${postgresPort}/production`,
        tokens: [password, postgresUserToken(user)],
      };
    }
    case 'dns': {
      const label = randomFrom(BASE32, 20);
      return { value: `${label}.${settings.dnsDomain}`, tokens: [dnsToken(label)] };
    }
    case 'kubeconfig': {
      const token = serviceAccountToken();
      return { value: kubeconfig(token, settings), tokens: [token] };
    }
    case 'url': {
      const token = randomBytes(18).toString('base64url');
      const url = `${trimmedBase(settings)}/r/${token}`;
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

/** A Postgres user name is a token too, but never matches a password or key presented elsewhere. */
export function postgresUserToken(user: string): string {
  return `pg-user:${user}`;
}

/** The label just left of the zone, as DNS compares it (case-insensitively). */
export function dnsToken(label: string): string {
  return `dns:${label.toLowerCase()}`;
}

const trimmedBase = (settings: DecoySettings) => settings.publicBaseUrl.replace(/\/+$/, '');

/**
 * The profile a thief would find: any AWS CLI or SDK call made with it is sent, signed with the
 * decoy key id, to this service's decoy AWS endpoint (`endpoint_url`, honoured by the CLI v2 and
 * SDKs since 2023). The key used against real AWS with another endpoint is not seen here.
 */
function awsProfile(id: string, secret: string, settings: DecoySettings): DecoyFile[] {
  return [
    {
      path: '~/.aws/credentials',
      content: `[default]\naws_access_key_id = ${id}\naws_secret_access_key = ${secret}\n`,
    },
    {
      path: '~/.aws/config',
      content: `[default]\nregion = us-east-1\nendpoint_url = ${trimmedBase(settings)}/aws\n`,
    },
  ];
}

/** Shaped like a service account token (a signed JWT); only this service knows it is a decoy. */
function serviceAccountToken(): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const header = part({ alg: 'RS256', kid: randomBytes(16).toString('base64url') });
  const claims = part({
    iss: 'kubernetes/serviceaccount',
    'kubernetes.io/serviceaccount/namespace': 'kube-system',
    'kubernetes.io/serviceaccount/service-account.name': 'deploy-bot',
    sub: 'system:serviceaccount:kube-system:deploy-bot',
  });
  return `${header}.${claims}.${randomBytes(256).toString('base64url')}`;
}

/** A kubeconfig whose cluster is this service's decoy Kubernetes API. */
function kubeconfig(token: string, settings: DecoySettings): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: production',
    '  cluster:',
    `    server: ${trimmedBase(settings)}/k8s`,
    'contexts:',
    '- name: production',
    '  context:',
    '    cluster: production',
    '    user: deploy-bot',
    '    namespace: kube-system',
    'current-context: production',
    'users:',
    '- name: deploy-bot',
    '  user:',
    `    token: ${token}`,
    '',
  ].join('\n');
}
