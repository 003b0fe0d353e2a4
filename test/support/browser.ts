import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

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
