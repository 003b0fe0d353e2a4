import type { Page } from 'playwright-core';
import request from 'supertest';
import { PASSWORD, setRole, signUpAndLogIn, uniqueEmail, type SignedIn } from '../support/accounts';
import {
  accessibilityViolations,
  openConsole,
  screenshotPath,
  signUpInConsole,
} from '../support/browser';
import { bearer } from '../support/canary-accounts';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';
import { startTestWorker } from '../support/test-worker';

/**
 * The console's Community and Admin pages and the overview's figures, in a real browser against
 * the real API, worker, Temporal and database. Two workspaces share; one address fires both.
 */
jest.setTimeout(120_000);

let t: TestApp;
let worker: { stop(): Promise<void> };
let browser: Awaited<ReturnType<typeof openConsole>>;
let page: Page;
let base: string;
const email = uniqueEmail();
/** A public address (documentation and private ranges are never indicators). */
const SCANNER = '8.8.4.4';

beforeAll(async () => {
  t = await createTestApp({
    config: testConfig({ TRUST_PROXY: 'loopback', COMMUNITY_MIN_WORKSPACES: '2' }),
  });
  worker = await startTestWorker(t.mongo.db, t.config.TEMPORAL_TASK_QUEUE);
  browser = await openConsole(t.app);
  ({ page, base } = browser);
});
afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await t?.close();
});

const heading = (name: string) => page.getByRole('heading', { name, exact: true, level: 1 });
const open = async (section: string) => {
  await page.getByRole('link', { name: section, exact: true }).click();
  await heading(section).waitFor();
};
async function shot(name: string) {
  expect(await accessibilityViolations(page)).toEqual([]);
  await page.screenshot({ path: screenshotPath(name), fullPage: true });
}

/** A canary of this account, fired from the scanner's address. */
async function firedFromScanner(who: Pick<SignedIn, 'token'>) {
  const res = await request(t.app)
    .post('/api/canaries')
    .set('Authorization', `Bearer ${who.token}`)
    .send({ kind: 'api_key' });
  const fired = await request(t.app)
    .get('/api/settings')
    .set('X-API-Key', (res.body as { value: string }).value)
    .set('X-Forwarded-For', SCANNER);
  expect(fired.status).toBe(401);
  await t.tripwires.flush();
}

it('shows the figures, shares with the community from the opt-in, and lets an operator disable an account', async () => {
  // Another workspace that shares, hit by the scanner.
  const other = await signUpAndLogIn(t.app);
  await request(t.app)
    .patch('/api/settings')
    .set(bearer(other))
    .send({ community_sharing: true })
    .expect(200);
  await firedFromScanner(other);

  await signUpInConsole(page, base, email, PASSWORD);
  // Not an operator: no Admin in the navigation.
  await expect(page.getByRole('link', { name: 'Admin', exact: true }).count()).resolves.toBe(0);
  const me = await request(t.app).post('/api/auth/login').send({ email, password: PASSWORD });
  await firedFromScanner({ token: (me.body as { token: string }).token });

  // The overview's figures: this workspace's one event, by alert level once the alert is in.
  await open('Threat events');
  const figures = page.getByTestId('figures');
  await figures.getByText(/^(CRITICAL|HIGH|MEDIUM) 1$/).waitFor({ timeout: 30_000 });
  await expect(figures.textContent()).resolves.toMatch(/Channels0 of 0 healthy/);

  // Community: nothing is shown (nor shared) until this workspace opts in.
  await open('Community');
  await page
    .getByTestId('indicators')
    .getByText(/^Turn sharing on/)
    .waitFor();
  await page.getByLabel(/Share the addresses that fire my canaries/).check();
  const row = page.getByTestId('indicators').getByRole('row').filter({ hasText: SCANNER });
  await row.waitFor();
  // Two workspaces, one hit each; which ones is never shown.
  await expect(row.locator('td[data-label="Workspaces"]').textContent()).resolves.toBe('2');
  await expect(row.locator('td[data-label="Hits"]').textContent()).resolves.toBe('2');
  await expect(page.textContent('main')).resolves.not.toContain(other.email);
  await shot('community');

  // Made an operator with the admin CLI: the Admin page appears after a reload.
  setRole(t.config, email, 'operator');
  await page.reload();
  await open('Admin');
  await page.getByLabel('Email starts with').fill(other.email);
  await page.getByRole('button', { name: 'Search' }).click();
  const account = page.getByTestId('admin-account').filter({ hasText: other.email });
  // The list before the search shows every account (the operator's too): wait for the answer.
  await page.getByTestId('admin-account').filter({ hasText: email }).waitFor({ state: 'detached' });
  await expect(page.getByTestId('admin-account').count()).resolves.toBe(1);
  await expect(account.textContent()).resolves.toContain('active');
  await page.getByRole('button', { name: `Disable ${other.email}` }).click();
  await page.getByRole('button', { name: 'Disable account' }).click();
  await account.getByText(/^disabled/).waitFor();
  const refused = await request(t.app)
    .post('/api/auth/login')
    .send({ email: other.email, password: PASSWORD });
  expect(refused.status).toBe(403);
  await account.getByLabel(`Plan of ${other.email}`).selectOption('pro');
  const planOf = async () =>
    (await t.mongo.db.collection('users').findOne({ email: other.email }))?.plan as string;
  for (const end = Date.now() + 10_000; (await planOf()) !== 'pro' && Date.now() < end;)
    await page.waitForTimeout(200);
  expect(await planOf()).toBe('pro');
  await shot('admin');
  await account.getByRole('button', { name: 'Enable' }).click();
  await account.getByText('active', { exact: true }).waitFor();
  await request(t.app)
    .post('/api/auth/login')
    .send({ email: other.email, password: PASSWORD })
    .expect(200);
});
