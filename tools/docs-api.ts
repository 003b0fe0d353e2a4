/**
 * `npm run docs:api`: writes docs/api-reference.md from the OpenAPI document the app serves, so the
 * reference page cannot drift from the routes. `--check` (test/unit/api-docs.test.ts) only
 * compares.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { API_OPERATIONS } from '../src/api';
import { openApiDocument } from '../src/openapi/document';
import { apiReferenceMarkdown } from '../src/openapi/markdown';

export const API_REFERENCE_PAGE = resolve(__dirname, '../docs/api-reference.md');

/** The page as the project's Prettier settings format it. */
export async function renderApiReference(): Promise<string> {
  // The server URL is the deployment's; the page names the development default.
  const markdown = apiReferenceMarkdown(openApiDocument(API_OPERATIONS, 'http://localhost:8080'));
  const options = await resolveConfig(API_REFERENCE_PAGE);
  return format(markdown, { ...options, parser: 'markdown' });
}

/** `--check`: exit 1 when the page differs from what the operations give, writing nothing. */
async function main(check: boolean): Promise<void> {
  const page = await renderApiReference();
  const current = existsSync(API_REFERENCE_PAGE) ? readFileSync(API_REFERENCE_PAGE, 'utf8') : '';
  if (check) {
    if (current === page) return;
    console.error(`${API_REFERENCE_PAGE} is out of date: run npm run docs:api`);
    process.exitCode = 1;
    return;
  }
  writeFileSync(API_REFERENCE_PAGE, page);
  console.log(`${API_REFERENCE_PAGE}: ${current === page ? 'already up to date' : 'written'}`);
}

if (require.main === module) void main(process.argv.includes('--check'));
