import { readFileSync } from 'node:fs';
import type { OpenApiDocument } from './document';

/**
 * Redocly's standalone bundle, copied from the `redoc` development dependency by the build
 * (tools/build-console.mjs), so a production install carries the one file and none of its
 * dependencies.
 */
export const REDOC_BUNDLE = 'dist/reference/redoc.standalone.js';

/**
 * `/docs`: the OpenAPI document rendered by Redoc (served from here, never a CDN): a contents
 * list by tag, each operation with its Markdown description rendered, request and answer
 * schemas, examples and the alert webhook.
 */
export const REFERENCE_ASSETS: Record<string, { type: string; body: () => string }> = {
  'redoc.standalone.js': {
    type: 'application/javascript',
    body: once(() => readFileSync(REDOC_BUNDLE, 'utf8')),
  },
  // The document is in the page as a JSON data block (the CSP allows no inline script).
  'reference.js': {
    type: 'application/javascript',
    body: () => `Redoc.init(JSON.parse(document.getElementById('openapi').textContent), {
  expandResponses: '200,201,202',
  jsonSampleExpandLevel: 3,
  nativeScrollbars: true,
  sortTagsAlphabetically: false,
}, document.getElementById('reference'));\n`,
  },
};

/**
 * Only this origin's scripts; Redoc's inline styles and its search worker (a blob). Redoc's badge
 * asks for a logo from Redocly's CDN: refused here, the image hides itself.
 */
export const REFERENCE_PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** Read on first use, then kept. */
function once(read: () => string): () => string {
  let body: string | undefined;
  return () => (body ??= read());
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The page, built once: the document inline (`<` escaped, so no tag can end the block early). */
export function referencePage(doc: OpenApiDocument): string {
  const json = JSON.stringify(doc).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(doc.info.title)} API reference</title><link rel="icon" href="data:,"></head>
<body>
<noscript><p>The reference needs JavaScript; the document itself is at <a href="/openapi.json">/openapi.json</a>.</p></noscript>
<div id="reference"></div>
<script type="application/json" id="openapi">${json}</script>
<script src="/docs/assets/redoc.standalone.js"></script>
<script src="/docs/assets/reference.js"></script>
</body></html>`;
}
