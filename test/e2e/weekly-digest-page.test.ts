import type { Page } from 'playwright-core';
import request from 'supertest';
import { weeklyScheduleId } from '../../src/weekly/weekly-schedules';
import { PASSWORD } from '../support/accounts';
import { accessibilityViolations, openConsole } from '../support/browser';
import { Receiver } from '../support/receiver';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';

/** The console's Weekly digest page in a real browser, against the real API, Temporal and worker. */
jest.setTimeout(120_000);

let t: TestApp;
let worker: { stop(): Promise<void> };
let receiver: Receiver;
let consoleApp: Awaited<ReturnType<typeof openConsole>>;
let page: Page;
let base: string;
const email = `weekly-e2e-${Date.now()}@example.com`;

beforeAll(async () => {
  t = await createTestApp({ config: testConfig({ ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' }) });
  worker = await startTestWorker(t.mongo.db, t.config.TEMPORAL_TASK_QUEUE);
  receiver = await Receiver.start();
  consoleApp = await openConsole(t.app);
  ({ base, page } = consoleApp);
});
afterAll(async () => {
  await consoleApp?.close();
  await receiver?.stop();
  await worker?.stop();
  await t?.close();
});

const heading = (name: string) => page.getByRole('heading', { name, exact: true, level: 1 });

it('sets the weekly digest, sends it now, and passes axe-core’s WCAG 2 A/AA rules', async () => {
  await page.goto(base);
  await page.getByRole('button', { name: 'Create an account' }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create account' }).click();
  await heading('Account').waitFor();

  const login = await request(t.app).post('/api/auth/login').send({ email, password: PASSWORD });
  const bearer = { Authorization: `Bearer ${login.body.token}` };
  const channel = await request(t.app)
    .post('/api/alert-channels')
    .set(bearer)
    .send({
      kind: 'webhook',
      name: 'ops digest',
      url: receiver.url('/weekly-e2e'),
      secret: 'weekly-e2e-webhook-secret',
    });
  expect(channel.status).toBe(201);

  await page.getByRole('link', { name: 'Weekly digest', exact: true }).click();
  await heading('Weekly digest').waitFor();
  await page.getByLabel('Send the weekly digest').check();
  await page.getByLabel('Day').selectOption('wednesday');
  await page.getByLabel('Hour').selectOption('7');
  await page.getByLabel('Time zone').fill('Europe/Lisbon');
  await page.getByLabel('ops digest').check();
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();

  const saved = await request(t.app).get('/api/weekly').set(bearer);
  expect(saved.body).toEqual({
    enabled: true,
    weekday: 'wednesday',
    hour: 7,
    time_zone: 'Europe/Lisbon',
    channels: [channel.body.id],
    schedule_synced: true,
  });
  const schedule = await t.temporal.client.schedule
    .getHandle(weeklyScheduleId(login.body.user_id as string))
    .describe();
  expect(schedule.spec.timezone).toBe('Europe/Lisbon');

  await page.getByRole('button', { name: 'Send now' }).click();
  await page.getByRole('status').filter({ hasText: 'Digest on its way' }).waitFor();
  const [digest] = await receiver.waitFor('/weekly-e2e', 1, 60_000);
  expect(digest!.headers['x-service-event']).toBe('account.weekly_digest');

  // A time zone the service does not know: the API's 422 detail is shown, nothing changes.
  await page.getByLabel('Time zone').fill('Atlantis/Lost_City');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('alert').filter({ hasText: 'body.time_zone' }).waitFor();
  expect((await request(t.app).get('/api/weekly').set(bearer)).body.time_zone).toBe(
    'Europe/Lisbon',
  );

  const violations = await accessibilityViolations(page);
  expect(violations).toEqual([]);
});
