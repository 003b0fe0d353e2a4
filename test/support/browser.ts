import { chromium, type Browser } from 'playwright-core';

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
