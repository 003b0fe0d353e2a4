import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import request from 'supertest';
import { PASSWORD } from '../support/accounts';
import { accessibilityViolations, openConsole, signUpInConsole } from '../support/browser';
import { createTestApp, type TestApp } from '../support/test-app';

/** The Account page's "Your data": the export downloaded and the erasure, in a real browser. */
jest.setTimeout(120_000);

let t: TestApp;
let consoleApp: Awaited<ReturnType<typeof openConsole>>;
let page: Page;
const email = `privacy-e2e-${Date.now()}@example.com`;

beforeAll(async () => {
  t = await createTestApp();
  consoleApp = await openConsole(t.app);
  ({ page } = consoleApp);
});
afterAll(async () => {
  await consoleApp?.close();
  await t?.close();
});

it('downloads the account’s data, refuses a wrong password, then erases the account', async () => {
  await signUpInConsole(page, consoleApp.base, email, PASSWORD);
  expect(await accessibilityViolations(page)).toEqual([]);

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download my data' }).click(),
  ]);
  const archive = JSON.parse(await readFile(await download.path(), 'utf8'));
  expect(archive.account).toMatchObject({ email });

  const form = page.getByTestId('erase-account');
  await form.getByLabel('Password', { exact: true }).fill('not the password at all');
  await form.getByLabel('Type "erase my account" to confirm').fill('erase my account');
  await form.getByRole('button', { name: 'Erase my account' }).click();
  await form.getByRole('alert').filter({ hasText: 'does not match' }).waitFor();
  expect(
    (await request(t.app).post('/api/auth/login').send({ email, password: PASSWORD })).status,
  ).toBe(200);

  await form.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await form.getByRole('button', { name: 'Erase my account' }).click();
  await page.getByRole('button', { name: 'Create an account' }).waitFor();
  const again = await request(t.app).post('/api/auth/login').send({ email, password: PASSWORD });
  expect(again.status).toBe(401);
});
