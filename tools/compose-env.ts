/**
 * docker-compose.yml as Compose reads it, for the checks that cannot run Docker here: each
 * service's definition and the environment its process gets from `.env` (env_file) and its
 * `environment:`, with `${VAR}`, `${VAR:-default}` and `${VAR:?error}` interpolated from `.env` as
 * Compose does. `npm run test:production` starts the API and worker with exactly that environment.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

export interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string | number>;
  env_file?: string;
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  ports?: string[];
  networks?: string[] | Record<string, { ipv4_address?: string } | null>;
  network_mode?: string;
  restart?: string;
  healthcheck?: { test: string[] };
  deploy?: { replicas?: number };
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
  networks: Record<string, { internal?: boolean; ipam?: { config: { subnet: string }[] } }>;
}

export const readCompose = (path = 'docker-compose.yml'): ComposeFile =>
  parse(readFileSync(path, 'utf8'), { merge: true }) as ComposeFile;

/** KEY=value lines of an env file; comments and blank lines skipped. */
export function readEnvFile(path: string): Record<string, string> {
  return Object.fromEntries(
    readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => /^[A-Z_][A-Z0-9_]*=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

/** Compose's interpolation: a required variable that is unset or empty is an error, as there. */
export function interpolate(value: string, dotenv: Record<string, string>): string {
  return value.replace(
    /\$\{(\w+)(?::([?-])([^}]*))?\}/g,
    (_, name: string, kind?: string, arg?: string) => {
      const set = dotenv[name];
      if (set) return set;
      if (kind === '?') throw new Error(`${name}: ${arg}`);
      return kind === '-' ? (arg ?? '') : '';
    },
  );
}

/** The service names a service is on, whether its `networks` is a list or a map. */
export const networksOf = (service: ComposeService): string[] =>
  Array.isArray(service.networks) ? service.networks : Object.keys(service.networks ?? {});

/** What a service's process sees with `dotenv` as `.env`: the env file, then `environment`. */
export function serviceEnv(
  service: ComposeService,
  dotenv: Record<string, string>,
): Record<string, string> {
  return {
    ...(service.env_file ? dotenv : {}),
    ...Object.fromEntries(
      Object.entries(service.environment ?? {}).map(([k, v]) => [
        k,
        interpolate(String(v), dotenv),
      ]),
    ),
  };
}
