import { z, type ZodType } from 'zod';
import {
  alertPayloadSchema,
  channelDisabledPayloadSchema,
  testAlertPayload,
  weeklyDigestPayloadSchema,
  WEEKLY_DIGEST_EVENT,
  type WeeklyDigestPayload,
} from '../alerts/payload';
import type { AnyOperation, Auth } from '../http/operation';
import { requiredScope } from '../keys/scopes';

/** Errors are `{"detail": "..."}` or `{"detail": {"error": "<code>", ...}}` everywhere. */
z.object({ detail: z.union([z.string(), z.looseObject({ error: z.string() })]) }).meta({
  id: 'Error',
  description: 'Every error answer: `detail` names the problem',
});

/** The alert payload, version 1, as generic webhook channels receive it. */
alertPayloadSchema.meta({ id: 'AlertPayloadV1' });
/** The weekly digest, in the same envelope. */
weeklyDigestPayloadSchema.meta({ id: 'WeeklyDigestPayloadV1' });
/** The notice sent when the service disabled one of the account's channels. */
channelDisabledPayloadSchema.meta({ id: 'ChannelDisabledNotice' });

type JsonSchema = Record<string, unknown>;

/**
 * The shape of `/openapi.json`: its paths, webhooks and components are OpenAPI and JSON Schema
 * objects.
 */
export const openApiDocumentView = z
  .object({
    openapi: z.literal('3.1.0'),
    info: z.object({ title: z.string(), version: z.string(), description: z.string() }),
    servers: z.array(z.object({ url: z.string(), description: z.string().optional() })),
    tags: z.array(z.object({ name: z.string(), description: z.string() })),
    components: z.object({
      schemas: z.record(z.string(), z.record(z.string(), z.unknown())),
      securitySchemes: z.record(z.string(), z.record(z.string(), z.unknown())),
    }),
    paths: z.record(z.string(), z.record(z.string(), z.unknown())),
    webhooks: z.record(z.string(), z.record(z.string(), z.unknown())),
  })
  .meta({ id: 'OpenApiDocument' });
export type OpenApiDocument = z.output<typeof openApiDocumentView>;

/** What each tag covers, in the order the reference shows them. */
const TAGS: Record<string, string> = {
  Accounts: 'Sign-up, sign-in, sessions, the account, its settings and usage',
  'API keys': 'Workspace API keys with scopes (console sessions only)',
  Canaries: 'Plant canary credentials and decoys',
  Threats: 'What fired: threat events and every sealed hit',
  Tripwires: 'Where planted decoys point: these answer as the real thing would',
  'Alert channels': 'Where alerts go, their deliveries and resends',
  Evidence: 'The tamper-evident evidence log: records, exports, checks, the signed Merkle log',
  Shield: 'Prompt-injection, jailbreak, secret and exfiltration inspection',
  Honeypot: 'Traps whose decoys fire as canaries',
  RAG: 'Documents whose leaks fire as canaries',
  Agents: 'AI agent heartbeat watch',
  'Workflow runs':
    "The caller's own alert, resend, test, agent-watch and weekly digest workflow runs and their stories",
  Dashboard: "The console overview's figures",
  'Weekly digest': 'When and where the weekly digest of what fired goes, and sending it now',
  Privacy: 'Everything held about the caller, as one archive',
  Community: 'Addresses that fired canaries in several opted-in workspaces',
  Admin: "The operators' API: accounts, plans, usage, disabling (operator accounts only)",
  Operations: 'Health, readiness, metrics, diagnostics and this reference',
};

const SECURITY: Record<Auth, Record<string, string[]>[]> = {
  none: [],
  session: [{ session: [] }],
  apiKey: [{ apiKey: [] }],
  sessionOrApiKey: [{ session: [] }, { apiKey: [] }],
  refreshCookie: [{ refreshCookie: [] }],
};

const COMPONENTS = '#/components/schemas/';
const ref = (id: string) => ({ $ref: `${COMPONENTS}${id}` });
const upperFirst = (s: string) => s[0]!.toUpperCase() + s.slice(1);

/** Request schemas inline, as clients send them (`input`: defaults make fields optional). */
const inputSchema = (schema: ZodType) => {
  const json = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    metadata: z.registry(),
  }) as JsonSchema;
  delete json.$schema;
  return json;
};

/**
 * Every answer schema as a named component (`output`: what handlers build), and a lookup from
 * schema to its name. Views named with `.meta({id})` keep their names and are referenced where
 * they nest; an unnamed one is named after its operation.
 */
function responseComponents(operations: readonly AnyOperation[]) {
  const registry = z.registry<{ id: string }>();
  const named = (schema: ZodType, fallback: string) => {
    if (!registry.has(schema)) {
      registry.add(schema, { id: z.globalRegistry.get(schema)?.id ?? fallback });
    }
    return registry.get(schema)!.id;
  };
  // Named views nested in answers are referenced, not repeated.
  for (const [id, schema] of z.globalRegistry._idmap) {
    if (!registry.has(schema)) registry.add(schema, { id });
  }
  const names = new Map<ZodType, string>();
  for (const op of operations) {
    const base = upperFirst(op.operationId);
    if (op.response) names.set(op.response, named(op.response, `${base}Response`));
    for (const [status, error] of Object.entries(op.errors ?? {})) {
      if (typeof error !== 'string') {
        names.set(error.response, named(error.response, `${base}${status}`));
      }
    }
  }
  const { schemas } = z.toJSONSchema(registry, {
    io: 'output',
    unrepresentable: 'any',
    uri: (id) => `${COMPONENTS}${id}`,
  });
  const components = Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => {
      const json = schema as JsonSchema;
      delete json.$schema;
      delete json.$id;
      return [id, json];
    }),
  );
  return { components, nameOf: (schema: ZodType) => names.get(schema)! };
}

function parameters(op: AnyOperation) {
  const inPath = [...op.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const query = op.query ? inputSchema(op.query) : undefined;
  const properties = (query?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((query?.required ?? []) as string[]);
  const inQuery = Object.entries(properties).map(([name, schema]) => {
    const deprecated = op.deprecatedQuery?.includes(name);
    return {
      name,
      in: 'query',
      required: required.has(name),
      ...(deprecated && { deprecated: true }),
      ...(typeof schema.description === 'string' && { description: schema.description }),
      schema,
    };
  });
  return [...inPath, ...inQuery];
}

function responses(op: AnyOperation, scope: string | undefined, nameOf: (s: ZodType) => string) {
  const error = (description: string) => ({
    description,
    content: { 'application/json': { schema: ref('Error') } },
  });
  const success = op.success;
  const out: Record<string, unknown> = {
    [success.status]: {
      description: success.description,
      ...(success.status !== 204 && {
        content: op.response
          ? {
              'application/json': {
                schema: ref(nameOf(op.response)),
                ...(op.examples?.response !== undefined && { example: op.examples.response }),
              },
            }
          : { [success.contentType ?? 'application/json']: {} },
      }),
    },
  };
  if (op.body || op.query) out[422] = error('A field is invalid: `detail` names it');
  if (op.body) out[413] = error('The body is larger than BODY_LIMIT');
  if (op.body) out[415] = error('The body is not `application/json`');
  if (op.path.includes('{')) out[400] = error('A path segment has malformed percent-encoding');
  if (op.auth !== 'none') out[401] = error('Missing or invalid credentials');
  else if (!op.beforeKeyLayer) out[401] = error('An X-API-Key was sent and is invalid or revoked');
  if (op.auth === 'apiKey' || op.auth === 'sessionOrApiKey' || op.path.includes('{')) {
    out[403] = error(
      scope
        ? `Another account's resource, or the key lacks ${scope}`
        : "Another account's resource",
    );
  }
  if (op.path.includes('{')) out[404] = error('No such resource');
  for (const [status, answer] of Object.entries(op.errors ?? {})) {
    out[status] =
      typeof answer === 'string'
        ? error(answer)
        : {
            description: answer.description,
            content: { 'application/json': { schema: ref(nameOf(answer.response)) } },
          };
  }
  return out;
}

/** Header parameters of a generic webhook delivery (packages/webhook-verify checks them). */
const WEBHOOK_HEADERS = [
  ['X-Service-Event', 'The payload’s `event`', true],
  ['X-Service-Timestamp', 'Unix seconds when this attempt was signed', true],
  [
    'X-Service-Signature',
    '`sha256=<hex>`: HMAC-SHA256 with the channel secret over `<X-Service-Timestamp>.<raw body>`; reject a timestamp more than 300 s from now',
    true,
  ],
  [
    'X-Service-Delivery',
    'The delivery id: the same on every retry and resend, so receivers de-duplicate on it',
    true,
  ],
  ['webhook-id', 'Standard Webhooks (channels with `standardWebhooks: true`)', false],
  ['webhook-timestamp', 'Standard Webhooks', false],
  ['webhook-signature', 'Standard Webhooks: `v1,<base64>` keyed with the channel secret', false],
] as const;

function webhook(
  summary: string,
  description: string,
  operationId: string,
  schema: string,
  { tag = 'Alert channels', example }: { tag?: string; example?: unknown } = {},
) {
  return {
    post: {
      operationId,
      summary,
      description,
      tags: [tag],
      parameters: WEBHOOK_HEADERS.map(([name, description, required]) => ({
        name,
        in: 'header',
        required,
        description,
        schema: { type: 'string' },
      })),
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: ref(schema),
            ...(example !== undefined && { example }),
          },
        },
      },
      responses: { '2XX': { description: 'Accepted' } },
    },
  };
}

function webhooks() {
  return {
    alert: webhook(
      'An alert, as a generic webhook channel receives it (payload version 1)',
      'Sent to the channel URL for each alert (`canary.tripwire_triggered`) and channel test (`canary.test_alert`). Verify the signature over the exact bytes received before parsing. Answer 2xx to accept; 408, 429 and 5xx are retried, other statuses are not.',
      'receiveAlert',
      'AlertPayloadV1',
      { example: testAlertPayload(new Date('2026-01-01T00:00:00.000Z')) },
    ),
    weeklyDigest: webhook(
      'A weekly digest, as a generic webhook channel receives it (payload version 1)',
      `Sent to the channels chosen in \`PUT /api/weekly\` (event \`${WEEKLY_DIGEST_EVENT}\`), with the same headers and signature as an alert. A report, never an incident.`,
      'receiveWeeklyDigest',
      'WeeklyDigestPayloadV1',
      { tag: 'Weekly digest', example: EXAMPLE_DIGEST },
    ),
    channelDisabled: webhook(
      "A notice that the service disabled one of the account's channels",
      'Sent (`X-Service-Event: channel.disabled`) to every other enabled channel once a channel has delivered nothing for `CHANNEL_DISABLE_AFTER` while its deliveries kept failing; signed and retried like an alert.',
      'receiveChannelDisabled',
      'ChannelDisabledNotice',
    ),
  };
}

const EXAMPLE_DIGEST = {
  version: '1',
  event: WEEKLY_DIGEST_EVENT,
  sentAt: '2026-01-05T08:00:00.000Z',
  data: {
    event: WEEKLY_DIGEST_EVENT,
    accountId: 'usr_example',
    from: '2025-12-29T08:00:00.000Z',
    to: '2026-01-05T08:00:00.000Z',
    timeZone: 'Europe/Berlin',
    totalHits: 3,
    canaries: [
      {
        canaryId: 'cnr_example',
        kind: 'aws_key',
        memo: 'prod .env on build box',
        hits: 3,
        byDay: [
          { key: '2026-01-02', count: 2 },
          { key: '2026-01-03', count: 1 },
        ],
      },
    ],
    sourcesByCountry: [{ key: 'NL', count: 1 }],
    deliveriesByOutcome: [{ key: 'delivered', count: 2 }],
    stillFailing: [],
    threatEventId: null,
  },
} satisfies WeeklyDigestPayload;

/** The OpenAPI 3.1 document, built from the operations the app mounts. */
export function openApiDocument(
  operations: readonly AnyOperation[],
  serverUrl: string,
): OpenApiDocument {
  const { components, nameOf } = responseComponents(operations);
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const op of operations) {
    op.tags.forEach((tag) => tags.add(tag));
    const scope =
      op.auth === 'apiKey' || op.auth === 'sessionOrApiKey'
        ? requiredScope(op.method, op.path.replace(/\{\w+\}/g, 'x'))
        : undefined;
    const description = [op.description, scope && `API keys need the scope \`${scope}\`.`]
      .filter(Boolean)
      .join('\n\n');
    (paths[op.path] ??= {})[op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      tags: op.tags,
      ...(description && { description }),
      ...(scope && { 'x-required-scope': scope }),
      security: SECURITY[op.auth],
      parameters: parameters(op),
      ...(op.body && {
        requestBody: {
          required: !op.bodyOptional,
          content: {
            'application/json': {
              schema: inputSchema(op.body),
              ...(op.examples?.body !== undefined && { example: op.examples.body }),
            },
          },
        },
      }),
      responses: responses(op, scope, nameOf),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'tripwire-service',
      version: '1',
      description:
        'Evidence log, API keys with scopes, plan limits, canaries and alert delivery, and the shield, honeypot, rag and agent product areas.',
    },
    servers: [{ url: serverUrl, description: 'PUBLIC_BASE_URL of this deployment' }],
    tags: [...tags]
      .sort((a, b) => Object.keys(TAGS).indexOf(a) - Object.keys(TAGS).indexOf(b))
      .map((name) => ({ name, description: TAGS[name] ?? name })),
    components: {
      // Error and AlertPayloadV1 are named views too, so they are among these.
      schemas: components,
      securitySchemes: {
        session: {
          type: 'http',
          scheme: 'bearer',
          description: 'Console session token from /api/auth/login',
        },
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'svc_<id>_<secret>',
        },
        refreshCookie: { type: 'apiKey', in: 'cookie', name: 'svc_refresh' },
      },
    },
    paths,
    webhooks: webhooks(),
  };
}
