import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { createTestApp, type TestApp } from '../support/test-app';

/** `/docs` in a real browser: Redoc, served by the app itself, renders the document under its CSP. */
jest.setTimeout(120_000);

let t: TestApp;
let server: Server;
let browser: Browser;
let page: Page;
const problems: string[] = [];
const elsewhere: string[] = [];

beforeAll(async () => {
  t = await createTestApp();
  server = t.app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (err) => problems.push(err.message));
  page.on('request', (req) => {
    if (!req.url().startsWith(base) && !req.url().startsWith('blob:')) elsewhere.push(req.url());
  });
  await page.goto(`${base}/docs`);
  await page.locator('h2', { hasText: 'Plant a canary (metered)' }).first().waitFor();
});

afterAll(async () => {
  await browser?.close();
  server?.close();
  await t?.close();
});

describe('the /docs reference page', () => {
  it('when opened, then a contents list names every tag and nothing breaks the page policy', async () => {
    const menu = page.locator('[role="menu"], .menu-content').first();
    for (const tag of ['Accounts', 'Canaries', 'Alert channels', 'Evidence', 'Shield']) {
      await expect(menu.getByText(tag, { exact: true }).first().isVisible()).resolves.toBe(true);
    }
    // Redoc's badge asks for its logo from Redocly's CDN: the policy refuses it, and it hides itself.
    const refusedLogo = /^Loading the image 'https:\/\/cdn\.redoc\.ly\/[^']+' violates/;
    expect(problems.filter((p) => !refusedLogo.test(p))).toEqual([]);
    expect(elsewhere.filter((url) => !url.startsWith('https://cdn.redoc.ly/'))).toEqual([]);
  });

  it('when a description holds Markdown, then it is rendered, not shown as backticks', async () => {
    const code = page.locator('code', { hasText: 'include_retired=true' }).first();
    await code.waitFor();
    await expect(page.getByText('`include_retired=true`').count()).resolves.toBe(0);
  });
});
