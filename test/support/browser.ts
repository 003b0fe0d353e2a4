import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
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
