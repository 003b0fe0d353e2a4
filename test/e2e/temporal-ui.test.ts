import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { startAlert } from '../../src/alerts/alert-workflows';
import { freePort, startLocalTemporal } from '../../tools/stack';
import { signUpAndLogIn, type SignedIn } from '../support/accounts';
import { alertResults, tripwirePayload } from '../support/alerts';
import { launchChromium, screenshotPath } from '../support/browser';
import { Receiver } from '../support/receiver';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';

/**
 * The Temporal Web UI as an operator uses it to inspect deliveries: a dev server of its own with
 * the UI (the suite's is headless), real alerts delivered to a local HTTPS receiver, and headless
 * Chromium filtering by `DeliveryOutcome` and opening an alert. The screenshots are the README's.
 */
jest.setTimeout(180_000);

let temporal: { stop(): Promise<void> };
let dataDir: string;
let uiBase: string;
let t: TestApp;
let receiver: Receiver;
let worker: { stop(): Promise<void> };
let browser: Browser;
let page: Page;

/**
 * A dev server with its Web UI, on ports chosen just before: tried again on fresh ports should a
 * test running beside this one take one of them first (the server then exits at once).
 */
async function devServerWithUi() {
  for (let attempt = 1; ; attempt++) {
    const [port, uiPort] = [await freePort(), await freePort()];
    try {
      const dir = join(dataDir, String(attempt));
      const server = await startLocalTemporal({ dataDir: dir, port, uiPort, log: () => undefined });
      return { server, uiPort };
    } catch (err) {
      if (attempt === 2) throw err;
    }
  }
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'temporal-ui-'));
  const { server, uiPort } = await devServerWithUi();
  temporal = server;
  const { address } = server;
  uiBase = `http://localhost:${uiPort}`;
  t = await createTestApp({
    config: testConfig({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true', TEMPORAL_ADDRESS: address }),
  });
  worker = await startTestWorker(t.mongo.db, t.config.TEMPORAL_TASK_QUEUE, {}, undefined, address);
  receiver = await Receiver.start();
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
});

afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await receiver?.stop();
  await t?.close();
  await temporal?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

async function channel(who: SignedIn, name: string, path: string, extra: object = {}) {
  await request(t.app)
    .post('/api/alert-channels')
    .set({ Authorization: `Bearer ${who.token}` })
    .send({ kind: 'webhook', name, url: receiver.url(path), secret: 'x'.repeat(24), ...extra });
}

async function alert(who: SignedIn, level: 'CRITICAL' | 'HIGH', n: number) {
  const threatEventId = `thr_demo${n}`;
  const payload = tripwirePayload(threatEventId);
  payload.data.alertLevel = level;
  payload.data.canaryId = `cnr_demo${n}`;
  const handle = await startAlert(t.temporal, { accountId: who.userId, payload, threatEventId });
  // An alert that reached none of its channels ends as a failed workflow (red in the list).
  await alertResults(handle);
  return handle.workflowId;
}

it('when an operator filters alerts by DeliveryOutcome and opens one, then the list and the timeline tell which channel failed', async () => {
  const ops = await signUpAndLogIn(t.app);
  await channel(ops, 'Ops receiver', '/ok');
  await channel(ops, 'Old CRM hook', '/status/410');
  await channel(ops, 'Pager (critical only)', '/status/503', { minLevel: 'CRITICAL' });
  const critical = await alert(ops, 'CRITICAL', 1);
  await alert(ops, 'HIGH', 2);
  const lonely = await signUpAndLogIn(t.app);
  await channel(lonely, 'Broken hook', '/status/500');
  const failed = await alert(lonely, 'HIGH', 3);

  const query = encodeURIComponent('DeliveryOutcome IS NOT NULL');
  await page.goto(`${uiBase}/namespaces/default/workflows?query=${query}`);
  await page.getByText(critical).first().waitFor({ timeout: 60_000 });
  await page.getByText(failed).first().waitFor();
  await page.screenshot({ path: screenshotPath('temporal-ui-failed-alerts') });

  await page.goto(`${uiBase}/namespaces/default/workflows/${critical}`);
  // The events with their summaries (the timeline names local activities by type only).
  await page.getByTestId('history-tab').click();
  await page.getByText('send to webhook "Pager (critical only)", attempt 3 of 3').first().waitFor({
    timeout: 60_000,
  });
  // A 410 is final: that attempt is recorded with the alert's outcomes, in one local activity.
  const outcomes = page.getByText(/record outcomes: .*webhook "Old CRM hook": 410/).first();
  await outcomes.waitFor();
  // The shot shows the named events rather than the workflow's input and result.
  await page.getByText('Event History', { exact: true }).last().scrollIntoViewIfNeeded();
  await page.mouse.wheel(0, 350);
  await page.screenshot({ path: screenshotPath('temporal-ui-alert') });
  // The static summary and details: account, canary, event, level.
  // (The summary and details render as Markdown in a sandboxed frame.)
  await page.getByText('User Metadata', { exact: true }).click();
  await page.getByText('Current Details').waitFor();
  await page.screenshot({ path: screenshotPath('temporal-ui-summary') });
});
