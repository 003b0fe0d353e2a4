import { readFileSync } from 'node:fs';
import { openApiDocument } from '../../src/openapi/document';
import { OPERATIONS } from '../../src/openapi/operations';

const doc = openApiDocument('http://localhost:8080');
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

/** Method and path of every row of the endpoint table in docs/api.md, in OpenAPI form. */
function readmeEndpoints(): [string, string][] {
  const readme = readFileSync('docs/api.md', 'utf8');
  const table = readme.slice(
    readme.indexOf('## Endpoints'),
    readme.indexOf('### API keys and scopes'),
  );
  const rows: [string, string][] = [];
  for (const line of table.split('\n').filter((l) => l.startsWith('| ') && l.includes('`/'))) {
    const [, methods, paths] = line.split('|').map((c) => c.trim());
    let base = '';
    for (const raw of paths!.match(/`[^`]+`/g) ?? []) {
      let path = raw
        .slice(1, -1)
        .replace(/\[.*\]$/, '')
        .replace(/<(\w+)>/g, '{$1}');
      if (path.startsWith('…')) path = base + path.slice(1);
      if (path === '/audit/...') path = '/audit/{log_id}';
      base = path;
      for (const method of methods!.split(',')) rows.push([method.trim().toLowerCase(), path]);
    }
  }
  return rows;
}

describe('the OpenAPI document', () => {
  it('when built, then it is OpenAPI 3.1 with the three ways to authenticate', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.components.securitySchemes)).toEqual([
      'session',
      'apiKey',
      'refreshCookie',
    ]);
  });

  it('when compared with docs/api.md, then every documented route is in it', () => {
    const missing = readmeEndpoints().filter(([method, path]) => !operation(method, path));
    expect(missing).toEqual([]);
    expect(readmeEndpoints().length).toBeGreaterThan(50);
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
    const schemaOf = (method: string, path: string, status: number) =>
      operation(method, path)!.responses[status]!.content!['application/json']!.schema!;
    const canary = schemaOf('post', '/api/canaries', 201);
    // Dates go out as ISO strings; a field the handler may leave out is not required.
    expect(canary.properties!.created_at).toMatchObject({ type: 'string', format: 'date-time' });
    expect(canary.properties!.retired_at).toEqual({
      anyOf: [expect.objectContaining({ format: 'date-time' }), { type: 'null' }],
    });
    expect(canary.required).not.toContain('secret');
    expect(canary.additionalProperties).toBe(false);
    const list = schemaOf('get', '/api/canaries', 200);
    expect(list.properties!.canaries).toEqual({
      type: 'array',
      items: { ...canary, $schema: undefined },
    });
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
