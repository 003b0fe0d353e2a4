import { once } from 'node:events';
import { mkdirSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { Express } from 'express';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Where the browser tests save their screenshots: `test-output/screenshots/` (not tracked), or
 * `SCREENSHOT_DIR`; `npm run screenshots` points it at docs/screenshots to refresh the ones the
 * docs show.
 */
export function screenshotPath(name: string): string {
  const dir = resolve(process.env.SCREENSHOT_DIR ?? join('test-output', 'screenshots'));
  mkdirSync(dir, { recursive: true });
  return join(dir, `${name}.png`);
}

/**
 * Debian's Chromium (apt package `chromium`, installed by .ci/run), never a downloaded browser.
 * Background networking off: this machine's closed network refuses Chromium's own connections.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

const AXE_SOURCE = readFileSync(require.resolve('axe-core'), 'utf8');

/** axe-core's WCAG 2 A and AA rules on the page as it is (evaluate is not bound by the CSP). */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const { violations } = await (
      globalThis as unknown as {
        axe: {
          run(options: object): Promise<{ violations: { id: string; nodes: unknown[] }[] }>;
        };
      }
    ).axe.run({ runOnly: ['wcag2a', 'wcag2aa'] });
    return violations.map((v) => `${v.id} (${v.nodes.length})`);
  });
}

/** The app on a free loopback port and Chromium with one page at desktop size, for a console test. */
export async function openConsole(app: Express) {
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  // localhost, not 127.0.0.1: the refresh cookie is Secure, which browsers allow on localhost.
  const base = `http://localhost:${(server.address() as AddressInfo).port}`;
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  return {
    base,
    browser,
    page,
    async close() {
      await browser.close();
      server.close();
    },
  };
}

/** Signs a new account up through the console's own form, and waits for its Account page. */
export async function signUpInConsole(page: Page, base: string, email: string, password: string) {
  await page.goto(base);
  await page.getByRole('button', { name: 'Create an account' }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'Account', exact: true, level: 1 }).waitFor();
}
