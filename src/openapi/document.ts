import { z, type ZodType } from 'zod';
import { requiredScope } from '../keys/scopes';
import { OPERATIONS, openApiDocumentView, type Auth, type Operation } from './operations';

/** Errors are `{"detail": "..."}` or `{"detail": {"error": "<code>", ...}}` everywhere. */
const errorSchema = z.object({
  detail: z.union([z.string(), z.looseObject({ error: z.string() })]),
});

/** Requests as the routes accept them (`input`), answers as the handlers build them (`output`). */
const jsonSchema = (schema: ZodType, io: 'input' | 'output' = 'input') =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
const jsonContent = (schema: ZodType) => ({
  'application/json': { schema: jsonSchema(schema, 'output') },
});

const SECURITY: Record<Auth, Record<string, string[]>[]> = {
  none: [],
  session: [{ session: [] }],
  apiKey: [{ apiKey: [] }],
  sessionOrApiKey: [{ session: [] }, { apiKey: [] }],
  refreshCookie: [{ refreshCookie: [] }],
};

function parameters(op: Operation) {
  const inPath = [...op.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const query = op.query ? jsonSchema(op.query) : undefined;
  const properties = (query?.properties ?? {}) as Record<string, unknown>;
  const required = new Set((query?.required ?? []) as string[]);
  const inQuery = Object.entries(properties).map(([name, schema]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema,
  }));
  return [...inPath, ...inQuery];
}

function responses(op: Operation, scope: string | undefined) {
  const error = (description: string) => ({
    description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  });
  const out: Record<string, unknown> = {
    [op.success.status]: {
      description: op.success.description,
      ...(op.success.status !== 204 && {
        content: op.response
          ? jsonContent(op.response)
          : { [op.success.contentType ?? 'application/json']: {} },
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
        : { description: answer.description, content: jsonContent(answer.response) };
  }
  return out;
}

/** The OpenAPI 3.1 document, built from the same zod schemas the routes validate with. */
export function openApiDocument(serverUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) {
    const scope =
      op.auth === 'apiKey' || op.auth === 'sessionOrApiKey'
        ? requiredScope(op.method, op.path.replace(/\{\w+\}/g, 'x'))
        : undefined;
    (paths[op.path] ??= {})[op.method] = {
      summary: op.summary,
      ...(scope && {
        description: `API keys need the scope \`${scope}\`.`,
        'x-required-scope': scope,
      }),
      security: SECURITY[op.auth],
      parameters: parameters(op),
      ...(op.body && {
        requestBody: {
          required: true,
          content: { 'application/json': { schema: jsonSchema(op.body) } },
        },
      }),
      responses: responses(op, scope),
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
    servers: [{ url: serverUrl }],
    components: {
      schemas: { Error: jsonSchema(errorSchema) },
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
  } satisfies z.output<typeof openApiDocumentView>;
}
