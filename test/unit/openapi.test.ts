import { API_OPERATIONS } from '../../src/api';
import { openApiDocument } from '../../src/openapi/document';

const doc = openApiDocument(API_OPERATIONS, 'http://localhost:8080');
const OPERATIONS = API_OPERATIONS;
type JsonSchema = {
  type?: string | string[];
  format?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: unknown;
};
type Op = {
  security: unknown[];
  requestBody?: { content: { 'application/json': { schema: { properties?: object } } } };
  responses: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
  parameters: { name: string; in: string }[];
};
const operation = (method: string, path: string) =>
  (doc.paths[path] as Record<string, Op> | undefined)?.[method];

describe('the OpenAPI document', () => {
  it('when built, then it is OpenAPI 3.1 with the three ways to authenticate', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.components.securitySchemes)).toEqual([
      'session',
      'apiKey',
      'refreshCookie',
    ]);
  });

  it('when built, then every operation has a unique operationId and a described tag', () => {
    const ids = OPERATIONS.map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThan(55);
    const tagged = Object.values(doc.paths).flatMap((methods) =>
      Object.values(methods).map((op) => (op as { tags: string[] }).tags),
    );
    const declared = doc.tags.map((tag) => tag.name);
    expect(tagged.flat().filter((tag) => !declared.includes(tag))).toEqual([]);
    expect(doc.tags.every((tag) => tag.description !== tag.name)).toBe(true);
  });

  it('when built, then the servers come from the configured base URL', () => {
    expect(openApiDocument(OPERATIONS, 'https://tripwire.example.com').servers).toEqual([
      expect.objectContaining({ url: 'https://tripwire.example.com' }),
    ]);
  });

  it('when built, then the webhooks section describes payload v1 and its signature headers', () => {
    const alert = doc.webhooks.alert!.post as {
      parameters: { name: string; in: string; required: boolean }[];
      requestBody: { content: { 'application/json': { schema: { $ref: string } } } };
    };
    expect(alert.parameters.filter((p) => p.required).map((p) => p.name)).toEqual([
      'X-Service-Event',
      'X-Service-Timestamp',
      'X-Service-Signature',
      'X-Service-Delivery',
    ]);
    expect(alert.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/AlertPayloadV1',
    );
    const payload = doc.components.schemas.AlertPayloadV1 as JsonSchema;
    expect(payload.required).toEqual(['version', 'event', 'sentAt', 'data']);
    expect(payload.properties!.version).toMatchObject({ const: '1' });
  });

  it('when an answer is a named view, then it is one component referenced wherever it is used', () => {
    const canaryRef = { $ref: '#/components/schemas/Canary' };
    const contentOf = (method: string, path: string, status: number) =>
      operation(method, path)!.responses[status]!.content!['application/json']!.schema;
    expect(contentOf('post', '/api/canaries', 201)).toEqual(canaryRef);
    expect(contentOf('get', '/api/canaries/{canary_id}', 200)).toEqual(canaryRef);
    expect((doc.components.schemas.CanaryList as JsonSchema).properties!.canaries).toEqual({
      type: 'array',
      items: canaryRef,
    });
  });

  it('when a route takes a body, then its schema comes from the route’s zod schema', () => {
    const signup = operation('post', '/api/auth/signup')!;
    const schema = signup.requestBody!.content['application/json'].schema as {
      properties: Record<string, { minLength?: number }>;
      required: string[];
    };
    expect(schema.required).toEqual(['email', 'password']);
    expect(schema.properties.password!.minLength).toBe(12);
  });

  it('when an operation answers JSON, then its success response has a body schema', () => {
    const json = OPERATIONS.filter(
      (op) => (op.success.contentType ?? 'application/json') === 'application/json',
    ).filter((op) => op.success.status !== 204);
    const missing = json
      .filter(
        (op) =>
          !operation(op.method, op.path)?.responses[op.success.status]?.content?.[
            'application/json'
          ]?.schema,
      )
      .map((op) => `${op.method} ${op.path}`);
    expect(missing).toEqual([]);
    expect(json.length).toBeGreaterThan(45);
  });

  it('when a body schema is built, then it is the JSON the handler sends', () => {
    const schemaOf = (method: string, path: string, status: number) => {
      const { $ref } = operation(method, path)!.responses[status]!.content!['application/json']!
        .schema! as { $ref: string };
      return doc.components.schemas[$ref.split('/').at(-1)!] as JsonSchema;
    };
    const canary = schemaOf('post', '/api/canaries', 201);
    // Dates go out as ISO strings; a field the handler may leave out is not required.
    expect(canary.properties!.created_at).toMatchObject({ type: 'string', format: 'date-time' });
    expect(canary.properties!.retired_at).toEqual({
      anyOf: [expect.objectContaining({ format: 'date-time' }), { type: 'null' }],
    });
    expect(canary.required).not.toContain('secret');
    expect(canary.additionalProperties).toBe(false);
    // A not-ready answer is the readiness report, not an error body.
    expect(schemaOf('get', '/readyz', 503)).toEqual(schemaOf('get', '/readyz', 200));
  });

  it('when a route takes an API key, then its scope is stated and refusals are documented', () => {
    const inspect = operation('post', '/shield/inspect') as Op & { 'x-required-scope': string };
    expect(inspect['x-required-scope']).toBe('shield:write');
    expect(Object.keys(inspect.responses)).toEqual(
      expect.arrayContaining(['200', '401', '402', '403', '422', '429']),
    );
    const trap = operation('delete', '/honeypot/traps/{trap_id}')!;
    expect(trap.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'force', in: 'query' })]),
    );
  });
});
