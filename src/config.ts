import { z } from 'zod';
import { SIGNUP_MODES } from './accounts/auth.service';
import './zod-messages';

/** Unset and empty mean the same: compose files pass empty values for settings left out. */
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** Every setting the API, the worker and the admin command read, validated once at start. */
const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('production'),
  HOST: z.string().min(1).default('0.0.0.0'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_PRETTY: bool.default(false),
  MONGODB_URI: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://'),
  MONGODB_DB: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,63}$/, 'letters, digits, _ and - only')
    .default('tripwire'),
  TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('tripwire'),
  BODY_LIMIT: z
    .string()
    .regex(/^\d+(b|kb|mb)$/, 'a size such as 100kb')
    .default('100kb'),
  /**
   * Express's `trust proxy`: `false`, a number of proxy hops, or addresses and subnets (`loopback`,
   * `10.0.0.0/8`, comma-separated) whose `X-Forwarded-For` is believed. `true` (believe anyone)
   * would let any client choose the address that rate limits and tripwire hits record.
   */
  TRUST_PROXY: z
    .string()
    .regex(/^(false|\d{1,2}|[\w.:/]+(\s*,\s*[\w.:/]+)*)$/, 'false, a hop count, or addresses')
    .refine((v) => v !== 'true', 'name the proxies (addresses, subnets or a hop count), not true')
    .default('false')
    .transform((v) =>
      v === 'false' ? false : /^\d+$/.test(v) ? Number(v) : v.split(',').map((a) => a.trim()),
    ),
  SESSION_TTL_HOURS: z.coerce
    .number()
    .positive()
    .max(24 * 7)
    .default(12),
  REFRESH_TTL_DAYS: z.coerce.number().positive().max(90).default(7),
  COOKIE_SECURE: bool.default(true),
  /** Who may create an account: anyone, holders of an invitation (admin command), or nobody. */
  SIGNUP_MODE: z.enum(SIGNUP_MODES).default('open'),
  /** Password hashes computed at once (each takes a core and 128 MiB); the rest queue. */
  PASSWORD_HASHING_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  /**
   * Failed sign-ins per minute per API process from browsers not known to the account; beyond
   * it, such sign-ins get 429 login_throttled until the minute's count falls (a botnet flood).
   */
  LOGIN_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(10),
  /** When set, `GET /metrics` needs `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: optional(z.string().regex(/^[A-Za-z0-9_-]{16,128}$/, '16–128 of A-Z a-z 0-9 _ -')),
  /** When set, `GET /docs` and `GET /openapi.json` need `Authorization: Bearer <DOCS_TOKEN>`. */
  DOCS_TOKEN: optional(z.string().regex(/^[A-Za-z0-9_-]{16,128}$/, '16–128 of A-Z a-z 0-9 _ -')),
  /** The web console's build (tools/build-console.mjs), served at /console/. */
  CONSOLE_DIR: z.string().min(1).default('dist/console'),
  /** Lets alert channels reach private and loopback addresses: development and tests only. */
  ALLOW_PRIVATE_WEBHOOK_TARGETS: bool.default(false),
  /** Channel tests running at once across all API replicas; more wait up to 10 s, then 429. */
  CHANNEL_TEST_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(4),
  /** Built-in email channel (alerts go to the account's email address); off when unset. */
  SMTP_URL: optional(z.string().regex(/^smtps?:\/\//, 'must start with smtp:// or smtps://')),
  SMTP_FROM: z.string().min(3).default('Tripwire alerts <alerts@localhost>'),
  /** Built-in messaging-chat channel (Telegram Bot API; chat id per account); off when unset. */
  TELEGRAM_BOT_TOKEN: optional(
    z.string().regex(/^\d+:[A-Za-z0-9_-]{20,}$/, 'a Bot API token such as 123456:ABC-…'),
  ),
  TELEGRAM_API_BASE: z.url({ protocol: /^https?$/ }).default('https://api.telegram.org'),
  /** How clients reach this service: tripwire URLs are made from it. */
  /** Where tripwire links point; unset, this API itself on `PORT` (development). */
  PUBLIC_BASE_URL: optional(z.url({ protocol: /^https?$/ })),
  /** Decoy addresses are made in this domain; its MX record should point at this service. */
  DECOY_EMAIL_DOMAIN: z
    .string()
    .regex(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/i, 'a domain name such as decoys.example.com')
    .default('decoys.localhost'),
  /** The SMTP listener that receives mail for decoy addresses (0: any free port). */
  DECOY_SMTP_PORT: z.coerce.number().int().min(0).max(65535).default(2525),
  /**
   * Tripwire traffic (`/r/<token>`, the decoy AWS and Kubernetes APIs) on its own HTTP listener,
   * so it can face the internet while the API, console, /metrics and /docs stay internal. Unset:
   * served by the API listener only.
   */
  TRIPWIRE_PORT: optional(z.coerce.number().int().min(0).max(65535)),
  /** Listen address of the tripwire, DNS, Postgres and mail decoys (default: HOST). */
  TRIPWIRE_HOST: optional(z.string().min(1)),
  /** How attackers reach the tripwire listener: URL tripwires, AWS endpoint_url, kubeconfig server. */
  PUBLIC_TRIPWIRE_URL: optional(z.url({ protocol: /^https?$/ })),
  /** The host name (or address) decoy database URLs point at: where DECOY_POSTGRES_PORT is reachable. */
  PUBLIC_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.:[\]-]+$/, 'a host name or address such as tripwire.example.com')
    .default('localhost'),
  /** The Postgres-wire decoy listener; unset: off (database URLs then name port 5432). */
  DECOY_POSTGRES_PORT: optional(z.coerce.number().int().min(0).max(65535)),
  /** The zone delegated to this service (NS record): DNS canaries are `<token>.<zone>`. */
  CANARY_DNS_DOMAIN: z
    .string()
    .regex(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/i, 'a domain name such as canary.example.com')
    .default('canary.localhost'),
  /** The authoritative DNS listener (UDP and TCP) for CANARY_DNS_DOMAIN; unset: off. */
  DNS_PORT: optional(z.coerce.number().int().min(0).max(65535)),
  /** The A record every name in the zone gets (live token or not); unset: every name is NXDOMAIN. */
  DNS_ANSWER_IPV4: optional(z.ipv4()),
  /** Hits on one canary from one source within this long form one threat event and one alert. */
  STORM_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /** A threat alert goes out once no further hit came for this long (at most 30 s after the first). */
  ALERT_GATHER_MS: z.coerce.number().int().min(0).max(30_000).default(2_000),
  /**
   * Signs the evidence log's checkpoints: `PRIVATE+KEY+…` (from `npm run evidence-key`) or the path
   * of a file holding it. Required in production; development makes one in .data/ when unset.
   */
  EVIDENCE_SIGNING_KEY: optional(z.string().min(1)),
  /** A signed checkpoint of the evidence log at least this often while records arrive. */
  CHECKPOINT_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /** The worker's `/metrics` (with the Temporal SDK's) and `/healthz` port; 0 turns both off. */
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /** Worker tuning (see the worker-scaling figures in docs/benchmarks.md): activities run at once per worker. */
  WORKER_ACTIVITY_SLOTS: z.coerce.number().int().min(1).max(1000).default(100),
  /** Workflow tasks processed at once per worker. */
  WORKER_WORKFLOW_TASK_SLOTS: z.coerce.number().int().min(2).max(1000).default(40),
  /** Long polls per worker for each of workflow and activity tasks (at most the slots). */
  WORKER_POLLERS: z.coerce.number().int().min(2).max(100).default(10),
  /** OTLP/HTTP base URL (`http://collector:4318`): traces go to `<url>/v1/traces`; off when unset. */
  OTEL_EXPORTER_OTLP_ENDPOINT: optional(z.url({ protocol: /^https?$/ })),
  /** IP reputation for `attacker.abuseScore` (AbuseIPDB); null scores when unset. */
  ABUSEIPDB_API_KEY: optional(z.string().min(1)),
  /** Newer copies of the enrichment data files (see src/canaries/ip-data/README.md); worker only. */
  IP_DATA_DIR: optional(z.string().min(1)),
  ABUSEIPDB_BASE_URL: z.url({ protocol: /^https?$/ }).default('https://api.abuseipdb.com'),
});

/** Settings whose default depends on others. */
const withDerivedDefaults = (config: z.infer<typeof configSchema>) => ({
  ...config,
  PUBLIC_BASE_URL: config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`,
});

export type Config = Readonly<ReturnType<typeof withDerivedDefaults>>;

/** The variable names, for checks that docs/configuration.md and docker-compose.yml name only real ones. */
export const CONFIG_VARIABLES = Object.keys(configSchema.shape);

export class ConfigError extends Error {}

/** Parses the environment; throws a ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return Object.freeze(withDerivedDefaults(parsed.data));
}

/** For entry points: print the problem and exit 1 rather than start half-configured. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    process.exit(1);
  }
}
