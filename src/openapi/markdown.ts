import type { OpenApiDocument } from './document';

type JsonSchema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  $ref?: string;
  description?: string;
  deprecated?: boolean;
};
interface OperationView {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security: Record<string, string[]>[];
  'x-required-scope'?: string;
  parameters: {
    name: string;
    in: string;
    required: boolean;
    deprecated?: boolean;
    schema: JsonSchema;
  }[];
  requestBody?: {
    required: boolean;
    content: { 'application/json': { schema: JsonSchema; example?: unknown } };
  };
  responses: Record<
    string,
    { description: string; content?: Record<string, { schema?: JsonSchema }> }
  >;
}

const AUTH_NAMES: Record<string, string> = {
  session: 'session token (`Authorization: Bearer`)',
  apiKey: 'API key (`X-API-Key`)',
  refreshCookie: 'refresh cookie',
};

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n+/g, ' ');
const anchor = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .trim()
    .replace(/ /g, '-');

/** A schema in a few words: `string (date-time) or null`, `array of Canary`, `"a" | "b"`. */
function typeOf(schema: JsonSchema | undefined): string {
  if (!schema) return 'any';
  if (schema.$ref)
    return `[${schema.$ref.split('/').at(-1)}](#${anchor(schema.$ref.split('/').at(-1)!)})`;
  if (schema.enum) return schema.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' | ');
  if ('const' in schema) return `\`${JSON.stringify(schema.const)}\``;
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(' or ');
  const types = Array.isArray(schema.type) ? schema.type : [schema.type ?? 'any'];
  return types
    .map((type) => {
      if (type === 'array') return `array of ${typeOf(schema.items)}`;
      if (type === 'string' && typeof schema.format === 'string')
        return `string (${schema.format})`;
      return type;
    })
    .join(' or ');
}

/** Limits worth a reader's eye: lengths, ranges, defaults. */
function limitsOf(schema: JsonSchema): string {
  const parts: string[] = [];
  const num = (key: string) => (typeof schema[key] === 'number' ? schema[key] : undefined);
  const [minL, maxL, min, max] = [
    num('minLength'),
    num('maxLength'),
    num('minimum'),
    num('maximum'),
  ];
  if (minL !== undefined || maxL !== undefined)
    parts.push(`${minL ?? 0}–${maxL ?? '…'} characters`);
  if (min !== undefined || max !== undefined) parts.push(`${min ?? '…'}–${max ?? '…'}`);
  if (schema.default !== undefined) parts.push(`default \`${JSON.stringify(schema.default)}\``);
  if (schema.deprecated) parts.push('**deprecated**');
  if (schema.description) parts.push(schema.description);
  return parts.join('; ');
}

function fieldTable(
  schema: JsonSchema,
  location: string,
  deprecated: (name: string) => boolean = () => false,
) {
  const rows = Object.entries(schema.properties ?? {}).map(
    ([name, field]) =>
      `| \`${name}\` | ${location} | ${cell(typeOf(field))} | ${schema.required?.includes(name) ? 'yes' : 'no'} | ${cell(limitsOf({ ...field, deprecated: deprecated(name) || field.deprecated }))} |`,
  );
  return rows;
}

function operationMarkdown(method: string, path: string, op: OperationView): string {
  const auth = op.security.length
    ? op.security.map((s) => Object.keys(s).map((k) => AUTH_NAMES[k] ?? k)).join(' or ')
    : 'none';
  const scope = op['x-required-scope'] ? `; API keys need \`${op['x-required-scope']}\`` : '';
  const lines = [`### \`${method.toUpperCase()} ${path}\``, '', `${op.summary}.`, ''];
  const description = op.description?.replace(/\n*API keys need the scope `[^`]+`\.$/, '');
  if (description) lines.push(description, '');
  lines.push(`Operation \`${op.operationId}\`. Authentication: ${auth}${scope}.`, '');
  const fields = [
    ...op.parameters
      .filter((p) => p.in === 'path')
      .map((p) => `| \`${p.name}\` | path | ${cell(typeOf(p.schema))} | yes | |`),
    ...op.parameters
      .filter((p) => p.in === 'query')
      .map(
        (p) =>
          `| \`${p.name}\` | query | ${cell(typeOf(p.schema))} | ${p.required ? 'yes' : 'no'} | ${cell(limitsOf({ ...p.schema, deprecated: p.deprecated }))} |`,
      ),
    ...(op.requestBody
      ? fieldTable(op.requestBody.content['application/json'].schema, 'body')
      : []),
  ];
  if (fields.length) {
    lines.push(
      '| Field | In | Type | Required | Notes |',
      '| --- | --- | --- | --- | --- |',
      ...fields,
      '',
    );
  }
  lines.push('| Status | Meaning | Body |', '| --- | --- | --- |');
  for (const [status, answer] of Object.entries(op.responses)) {
    const [type, media] = Object.entries(answer.content ?? {})[0] ?? [];
    const body = media?.schema ? typeOf(media.schema) : type ? `\`${type}\`` : '';
    lines.push(`| ${status} | ${cell(answer.description)} | ${cell(body)} |`);
  }
  return lines.join('\n');
}

function componentMarkdown(name: string, schema: JsonSchema): string {
  const lines = [`### ${name}`, ''];
  if (schema.description) lines.push(schema.description, '');
  if (schema.properties) {
    lines.push('| Field | Type | Required | Notes |', '| --- | --- | --- | --- |');
    for (const [field, value] of Object.entries(schema.properties)) {
      lines.push(
        `| \`${field}\` | ${cell(typeOf(value))} | ${schema.required?.includes(field) ? 'yes' : 'no'} | ${cell(limitsOf(value))} |`,
      );
    }
  } else {
    lines.push(`${typeOf(schema)}`);
  }
  return lines.join('\n');
}

/**
 * docs/api-reference.md: the OpenAPI document as a Markdown page (`npm run docs:generate` writes it; a
 * unit test fails when it is out of date).
 */
export function apiReferenceMarkdown(doc: OpenApiDocument): string {
  const byTag = new Map<string, string[]>(doc.tags.map((tag) => [tag.name, []]));
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods) as [string, OperationView][]) {
      byTag.get(op.tags[0]!)!.push(operationMarkdown(method, path, op));
    }
  }
  const webhook = doc.webhooks.alert!.post as {
    summary: string;
    description: string;
    parameters: { name: string; required: boolean; description: string }[];
  };
  const sections = doc.tags.map(
    (tag) => `## ${tag.name}\n\n${tag.description}.\n\n${byTag.get(tag.name)!.join('\n\n')}`,
  );
  return `# API reference (generated)

<!-- Generated from the OpenAPI document by \`npm run docs:generate\`: edit the operations in src/, not this page. -->

[Back to the API overview](api.md) · served live at \`/openapi.json\` and, readable, at \`/docs\`.

${doc.info.description} Errors are JSON: \`{"detail": "..."}\` or \`{"detail": {"error": "<code>", ...}}\` ([Error](#error)).

## Contents

${doc.tags.map((tag) => `- [${tag.name}](#${anchor(tag.name)}): ${tag.description}`).join('\n')}
- [Webhooks: the alert payload](#webhooks-the-alert-payload)
- [Schemas](#schemas)

${sections.join('\n\n')}

## Webhooks: the alert payload

${webhook.summary}. ${webhook.description}

| Header | Required | Meaning |
| --- | --- | --- |
${webhook.parameters.map((p) => `| \`${p.name}\` | ${p.required ? 'yes' : 'no'} | ${cell(p.description)} |`).join('\n')}

The body is [AlertPayloadV1](#alertpayloadv1).

${(doc.webhooks.channelDisabled!.post as { description: string }).description} The same headers; the body is [ChannelDisabledNotice](#channeldisablednotice).

## Schemas

${Object.entries(doc.components.schemas)
  .sort(([a], [b]) => a.localeCompare(b))
  .map(([name, schema]) => componentMarkdown(name, schema as JsonSchema))
  .join('\n\n')}
`;
}
