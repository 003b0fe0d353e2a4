import type { openApiDocument } from './document';

type Document = ReturnType<typeof openApiDocument>;
interface OperationView {
  summary: string;
  security: Record<string, string[]>[];
  'x-required-scope'?: string;
  parameters: { name: string; in: string; required: boolean }[];
  requestBody?: { content: { 'application/json': { schema: unknown } } };
  responses: Record<
    string,
    { description: string; content?: Record<string, { schema?: Record<string, unknown> }> }
  >;
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const schemaDetails = (title: string, schema: unknown) =>
  `<details><summary>${title} (JSON Schema)</summary><pre>${escape(
    JSON.stringify(schema, null, 2),
  )}</pre></details>`;

const AUTH_NAMES: Record<string, string> = {
  session: 'session token (Authorization: Bearer)',
  apiKey: 'API key (X-API-Key)',
  refreshCookie: 'refresh cookie',
};

function operationHtml(method: string, path: string, op: OperationView): string {
  const auth = op.security.length
    ? op.security.map((s) => Object.keys(s).map((k) => AUTH_NAMES[k] ?? k)).join(' or ')
    : 'none';
  const params = op.parameters.length
    ? `<p>Parameters: ${op.parameters
        .map((p) => `<code>${escape(p.name)}</code> (${p.in}${p.required ? ', required' : ''})`)
        .join(', ')}</p>`
    : '';
  const body = op.requestBody
    ? schemaDetails('Request body', op.requestBody.content['application/json'].schema)
    : '';
  // Error answers point at the shared `Error` schema, described once at the top.
  const responses = Object.entries(op.responses)
    .map(([status, r]) => {
      const schema = r.content?.['application/json']?.schema;
      const shown = schema && !('$ref' in schema) ? schemaDetails('Body', schema) : '';
      return `<li><code>${status}</code> ${escape(r.description)}${shown}</li>`;
    })
    .join('');
  const id = `${method}-${path}`.replace(/[^a-z0-9]+/gi, '-');
  return `<section id="${id}" aria-labelledby="${id}-h">
<h3 id="${id}-h"><code>${method.toUpperCase()} ${escape(path)}</code></h3>
<p>${escape(op.summary)}</p>
<p>Authentication: ${escape(auth)}${op['x-required-scope'] ? `; scope <code>${escape(op['x-required-scope'])}</code>` : ''}</p>
${params}${body}<ul>${responses}</ul>
</section>`;
}

/** A readable, dependency-free reference page rendered once from the OpenAPI document. */
export function referencePage(doc: Document): string {
  const sections = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => operationHtml(method, path, op as OperationView)),
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(doc.info.title)} API reference</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:0 auto;padding:1rem;color:#111}
code,pre{background:#f2f2f2;border-radius:4px;padding:0 .2em}pre{padding:.5em;overflow:auto}
section{border-top:1px solid #ccc;padding:.5rem 0}h3{font-size:1.05rem;margin:.4rem 0}</style></head>
<body><main><h1>${escape(doc.info.title)} API reference</h1>
<p>${escape(doc.info.description)} Machine-readable: <a href="/openapi.json">/openapi.json</a>.
Errors are JSON: <code>{"detail": "..."}</code> or <code>{"detail": {"error": "&lt;code&gt;", ...}}</code>.</p>
${sections.join('\n')}
</main></body></html>`;
}
