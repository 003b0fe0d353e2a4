import type { Page } from 'playwright-core';
import request from 'supertest';
import { PASSWORD } from '../support/accounts';
import { accessibilityViolations, openConsole, signUpInConsole } from '../support/browser';
import { createTestApp, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';

/** The console's Workflow runs page in a real browser, against the real API, Temporal and worker. */
jest.setTimeout(120_000);

let t: TestApp;
let worker: { stop(): Promise<void> };
let consoleApp: Awaited<ReturnType<typeof openConsole>>;
let page: Page;
let base: string;
const email = `runs-e2e-${Date.now()}@example.com`;

beforeAll(async () => {
  t = await createTestApp();
  worker = await startTestWorker(t.mongo.db, t.config.TEMPORAL_TASK_QUEUE);
  consoleApp = await openConsole(t.app);
  ({ base, page } = consoleApp);
});
afterAll(async () => {
  await consoleApp?.close();
  await worker?.stop();
  await t?.close();
});

const heading = (name: string) => page.getByRole('heading', { name, exact: true, level: 1 });

it("lists the account's own workflow runs, and passes axe-core's WCAG 2 A/AA rules", async () => {
  await signUpInConsole(page, base, email, PASSWORD);

  const login = await request(t.app).post('/api/auth/login').send({ email, password: PASSWORD });
  const ping = await request(t.app)
    .post('/api/diagnostics/worker-ping')
    .set('Authorization', `Bearer ${login.body.token}`);
  expect(ping.status).toBe(200);
  // Visibility lags a run's end by a moment: the page's Refresh asks again.
  await page.getByRole('link', { name: 'Workflow runs', exact: true }).click();
  await heading('Workflow runs').waitFor();
  const row = page.getByTestId('workflow-run').filter({ hasText: ping.body.workflow_id });
  const deadline = Date.now() + 30_000;
  while (!(await row.count()) || !(await row.textContent())!.includes('completed')) {
    if (Date.now() > deadline) throw new Error('the run never showed as completed');
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.waitForTimeout(300);
  }
  expect(await row.textContent()).toContain('workerPingWorkflow');

  const violations = await accessibilityViolations(page);
  expect(violations).toEqual([]);
});
