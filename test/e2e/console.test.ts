import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import request from 'supertest';
import { verifyWebhookSignature } from '../../src/alerts/webhook-signature';
import { DEFAULT_LIVE_FEED_SETTINGS } from '../../src/canaries/live-feed';
import { EvidenceStore } from '../../src/evidence/evidence.store';
import { startAlertStack } from '../support/alert-stack';
import { accessibilityViolations, openConsole, screenshotPath } from '../support/browser';
import type { Receiver } from '../support/receiver';
import type { TestApp } from '../support/test-app';

/**
 * The web console in a real browser against the real stack (API, worker, Temporal, the database, an
 * HTTPS receiver). One account walks through the console in order; screenshots of the main
 * screens are saved (`screenshotPath`; `npm run screenshots` refreshes the README's).
 */
jest.setTimeout(120_000);

let stack: Awaited<ReturnType<typeof startAlertStack>>;
let t: TestApp;
let receiver: Receiver;
let browser: Awaited<ReturnType<typeof openConsole>>;
let page: Page;
let base: string;
const email = `e2e-${Date.now()}@example.com`;
const SECRET = 'console-e2e-signing-secret';

beforeAll(async () => {
  // The proxy is trusted so that a hit can come "from" a public address the map can place.
  stack = await startAlertStack({ ALERT_GATHER_MS: '250', TRUST_PROXY: 'loopback' });
  ({ t, receiver } = stack);
  browser = await openConsole(t.app);
  ({ page, base } = browser);
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** Saves a screenshot of a main screen for the README, after checking the screen's accessibility. */
async function shot(name: string) {
  expect(await accessibilityViolations(page)).toEqual([]);
  await page.screenshot({ path: screenshotPath(name), fullPage: true });
}
const heading = (name: string) => page.getByRole('heading', { name, exact: true, level: 1 });
const open = async (section: string) => {
  await page.getByRole('link', { name: section, exact: true }).click();
  await heading(section).waitFor();
};
/** The signed-in account's id, as the console shows it. */
const accountId = () => page.getByTestId('account-id').textContent();

describe('the web console', () => {
  it('signs up, stays signed in across a reload through the refresh cookie, and shows the account', async () => {
    await page.goto(base);
    await page.getByRole('button', { name: 'Create an account' }).click();
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    // The browser refuses the short password before anything is sent.
    await heading('Create an account').waitFor();
    expect(await t.mongo.db.collection('users').countDocuments({ email })).toBe(0);
    await page.getByLabel('Password').fill('correct horse battery staple');
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading('Account').waitFor();

    const user = await t.mongo.db.collection('users').findOne({ email });
    expect(await accountId()).toBe(String(user!._id));
    await expect(
      page.getByRole('region', { name: 'Usage per metric' }).textContent(),
    ).resolves.toMatch(/Shield inspections this month\s*0\s*10/);
    await page.reload();
    await heading('Account').waitFor();
    expect(await accountId()).toBe(String(user!._id));
    await shot('account');
  });

  it('changes the password: a wrong current one is refused, the right one signs other sessions out', async () => {
    const other = await request(t.app)
      .post('/api/auth/login')
      .send({ email, password: 'correct horse battery staple' });
    const form = page.getByTestId('password-change');
    await form.getByLabel('Current password').fill('not the password');
    await form.getByLabel('New password').fill('a brand new passphrase');
    await form.getByRole('button', { name: 'Change password' }).click();
    await expect(form.getByRole('alert').textContent()).resolves.toMatch(/current_password/);
    await form.getByLabel('Current password').fill('correct horse battery staple');
    await form.getByLabel('New password').fill('a brand new passphrase');
    await form.getByRole('button', { name: 'Change password' }).click();
    await form.getByRole('status').waitFor();
    // This console stays signed in; the other session does not.
    await heading('Account').waitFor();
    const otherMe = await request(t.app)
      .get('/api/users/me')
      .set('Authorization', `Bearer ${other.body.token}`);
    expect(otherMe.status).toBe(401);
  });

  it('generates a key shown once, lists it, and revokes it after a confirmation', async () => {
    await open('API keys');
    await page.getByLabel('Key name (optional)').fill('e2e key');
    await page.getByRole('button', { name: 'Generate API key' }).click();
    const key = (await page.getByTestId('new-key-value').textContent())!;
    expect(key).toMatch(/^svc_/);
    await shot('keys');
    // The key works, with every scope.
    expect((await request(t.app).get('/api/settings').set('X-API-Key', key)).status).toBe(200);

    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.reload();
    await heading('API keys').waitFor();
    const row = page.getByRole('row', { name: /e2e key/ });
    await expect(row.textContent()).resolves.toContain(key.slice(0, 12));
    expect(await page.content()).not.toContain(key);

    await row.getByRole('button', { name: 'Revoke e2e key' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect((await request(t.app).get('/api/settings').set('X-API-Key', key)).status).toBe(200);
    await row.getByRole('button', { name: 'Revoke e2e key' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('No active keys.').waitFor();
    expect((await request(t.app).get('/api/settings').set('X-API-Key', key)).status).toBe(401);
  });

  it('adds a webhook channel, sends a test that arrives signed, then shows lastError once the receiver breaks', async () => {
    await open('Alert channels');
    await page.getByLabel('Name').fill('ops webhook');
    await page.getByLabel('URL').fill(receiver.url('/hook'));
    await page.getByLabel('Signing secret').fill('too short');
    await page.getByRole('button', { name: 'Add channel' }).click();
    await page.getByText('The secret needs at least 16 characters (it has 9).').waitFor();
    expect(await t.mongo.db.collection('alert_channels').countDocuments()).toBe(0);

    await page.getByLabel('Signing secret').fill(SECRET);
    await page.getByRole('button', { name: 'Add channel' }).click();
    const card = page.getByRole('listitem').filter({ hasText: 'ops webhook' });
    await card.getByRole('button', { name: 'Send test' }).click();
    await expect(
      card.getByTestId('test-outcome').filter({ hasText: 'Test delivered (200).' }).waitFor(),
    ).resolves.toBeUndefined();
    await card
      .getByTestId('health')
      .getByText('Recent success rate: 100% (1 of 1 delivered)')
      .waitFor();
    const [hit] = await receiver.waitFor('/hook');
    expect(
      verifyWebhookSignature(SECRET, {
        rawBody: hit!.rawBody,
        timestamp: hit!.headers['x-service-timestamp'] as string,
        signature: hit!.headers['x-service-signature'] as string,
      }),
    ).toEqual({ ok: true });
    await shot('channels');

    receiver.breakWith(500);
    await card.getByRole('button', { name: 'Send test' }).click();
    await card.getByTestId('last-error').waitFor({ timeout: 60_000 });
    await expect(card.getByTestId('last-error').textContent()).resolves.toMatch(
      /Last error \(500\)/,
    );
    await card
      .getByTestId('health')
      .getByText('Recent success rate: 50% (1 of 2 delivered)')
      .waitFor();
    await card.getByRole('button', { name: 'Recent deliveries' }).click();
    const deliveries = card.getByRole('region', { name: 'Recent deliveries' });
    await deliveries.getByText('failed').waitFor();
    await expect(deliveries.locator('ol.attempts').first().locator('li').count()).resolves.toBe(3);
    await shot('channels-error');
    receiver.breakWith(null);

    // The receiver is back: the failed test is sent again, with its first delivery id.
    const failedId = hit!.headers['x-service-delivery'] as string;
    await deliveries
      .getByRole('button', { name: /^Resend delivery / })
      .first()
      .click();
    await card
      .getByTestId('resend-outcome')
      .getByText(/^Sent again as resend-/)
      .waitFor();
    const hits = await receiver.waitFor('/hook', 5);
    expect(hits).toHaveLength(5);
    expect(hits[4]!.headers['x-service-delivery']).toBe(hits[1]!.headers['x-service-delivery']);
    expect(hits[4]!.headers['x-service-delivery']).not.toBe(failedId);
  });

  it("sets the Telegram chat for the built-in chat channel, and shows the service's refusal of a bad one", async () => {
    await page.getByLabel('Telegram chat id').fill('not a chat');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('body.telegram_chat_id: a numeric chat id or an @channel name').waitFor();
    await page.getByLabel('Telegram chat id').fill('@tripwire_alerts');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved.').waitFor();
    const user = await t.mongo.db.collection('users').findOne({ email });
    expect(user!.telegramChatId).toBe('@tripwire_alerts');
  });

  it('plants a canary, and its threat event shows with enrichment and risk after it fires', async () => {
    await open('Canaries');
    await page.getByLabel('Kind').selectOption('api_key');
    await page.getByLabel('Memo (optional)').fill('billing .env');
    await page.getByRole('button', { name: 'Plant canary' }).click();
    const value = (await page.getByTestId('canary-value').first().textContent())!;
    await page.getByText('How to use it').first().click();
    await shot('canaries');

    // Someone tries the planted key: refused like any bad key, and the canary fires; the
    // webhook receiver is down, so that channel's delivery fails.
    receiver.breakWith(500);
    expect((await request(t.app).get('/api/settings').set('X-API-Key', value)).status).toBe(401);

    await open('Threat events');
    const event = page.getByTestId('threat-event').first();
    // The event, its hit and its risk arrive without a click (the live stream: each hit and each
    // alert's update; the alert may be prepared a moment before the hit is sealed).
    await event.getByText(/risk$/).waitFor({ timeout: 30_000 });
    await event.getByRole('link', { name: 'api_key canary fired once' }).waitFor();
    await expect(event.textContent()).resolves.toMatch(/api_key canary fired once.*risk/);
    // The hit and the alert are recorded by now (see the live stream's check below).
    const recorded = Date.now();
    await expect(event.textContent()).resolves.toMatch(/Interpretation/);
    await expect(event.textContent()).resolves.toMatch(/Memobilling \.env/);

    // The event's page: the hit with its client and sealed record, the alert, and who was told.
    await event.getByRole('link', { name: /api_key canary fired once/ }).click();
    await heading('api_key canary fired once').waitFor();
    const hits = page.getByRole('region', { name: 'Hits', exact: true });
    await expect(hits.getByRole('row').count()).resolves.toBe(2);
    await expect(hits.textContent()).resolves.toMatch(/api_key/);
    await expect(page.getByTestId('alert').textContent()).resolves.toMatch(/risk/);
    const webhook = page.getByTestId('channel-story').filter({ hasText: 'ops webhook' });
    const until = Date.now() + 60_000;
    while (!(await webhook.getByText('failed', { exact: true }).count()) && Date.now() < until) {
      await page.waitForTimeout(1000);
      await page.reload();
      await heading('api_key canary fired once').waitFor();
    }
    const attempts = webhook.getByRole('region', { name: 'Deliveries to ops webhook' });
    await expect(attempts.locator('ol.attempts li').count()).resolves.toBe(3);
    await expect(attempts.locator('ol.attempts').textContent()).resolves.toMatch(/^500 in \d+ ms/);
    receiver.breakWith(null);
    await hits.getByRole('button', { name: /^Verify record/ }).click();
    await hits.getByText('Verified: hash recomputed and matches').waitFor();
    // The inclusion proof, checked in the browser with Web Crypto against the log's key.
    await hits.getByRole('button', { name: /^Check the inclusion proof of record/ }).click();
    await hits
      .getByText(/✓ In the log: leaf \d+ of \d+, promise and proof checked in this browser/)
      .waitFor();
    await shot('threat-event');
    await attempts.getByRole('button', { name: /^Resend delivery / }).click();
    await webhook.getByText(/^Sent again as resend-/).waitFor();

    // The overview: the hit in the chart and the canary at the top; a new hit arrives unreloaded.
    // The live feed starts with the view's stream and sends it what was recorded in the grace
    // period before, which re-reads the list: the view opens once the hit and alert are older.
    await page.waitForTimeout(
      Math.max(0, recorded + DEFAULT_LIVE_FEED_SETTINGS.graceMs + 500 - Date.now()),
    );
    await open('Threat events');
    await expect(page.getByTestId('hits-total').textContent()).resolves.toMatch(/^1 hit, last 24/);
    await expect(page.getByTestId('most-fired').textContent()).resolves.toBe(
      'api_key “billing .env”: 1 hit',
    );
    await page.getByLabel('Range', { exact: true }).selectOption('7d');
    await page.getByTestId('hits-total').getByText('1 hit, last 7 days').waitFor();
    await page.evaluate(() => Object.assign(globalThis, { stillThisPage: true }));
    // New hits come through the server's event stream: while it is open nothing polls.
    await page
      .getByTestId('live-status')
      .getByText(/^Live: /)
      .waitFor({ timeout: 20_000 });
    const listReads: string[] = [];
    const countRead = (r: { url(): string }) => {
      if (r.url().includes('/api/threat-events?limit=50')) listReads.push(r.url());
    };
    page.on('request', countRead);
    await page.waitForTimeout(6_000);
    expect(listReads).toEqual([]);
    const fromGoogle = await request(t.app)
      .get('/api/settings')
      .set('X-API-Key', value)
      .set('X-Forwarded-For', '8.8.8.8');
    expect(fromGoogle.status).toBe(401);
    await page
      .getByTestId('hits-total')
      .getByText('2 hits, last 7 days')
      .waitFor({ timeout: 20_000 });
    expect(await page.evaluate(() => 'stillThisPage' in globalThis)).toBe(true);
    page.off('request', countRead);
    // Re-read once the stream told of the hit (a storm's hits settle into one read).
    expect(listReads.length).toBeGreaterThanOrEqual(1);
    await expect(
      page.getByTestId('hits-chart').locator('rect[data-count="2"]').count(),
    ).resolves.toBe(1);
    // The hit from 8.8.8.8 opened a storm of its own (a new source), open for 60 s.
    await page
      .getByTestId('open-storms')
      .getByRole('listitem')
      .filter({
        hasText:
          /api_key canary fired once “billing \.env” from 8\.8\.8\.8; further hits join it until/,
      })
      .waitFor({ timeout: 20_000 });
    // 8.8.8.8 is placed in the US by the shipped location data: a point there once enriched.
    await page
      .getByTestId('hits-map')
      .locator('circle[data-country="US"]')
      .waitFor({ timeout: 20_000 });
    await shot('threats');

    await open('Canaries');
    await expect(page.getByTestId('canary-hits').first().textContent()).resolves.toMatch(
      /^Fired 2 times, last /,
    );

    // The canary's page: where it was planted, its hits over time, its events.
    await page.getByTestId('canary').first().getByRole('link').click();
    await heading('api_key canary: billing .env').waitFor();
    await expect(page.getByTestId('canary-fired').textContent()).resolves.toMatch(
      /^2 times, last /,
    );
    await expect(page.getByTestId('hits-total').textContent()).resolves.toBe(
      '2 hits, last 30 days',
    );
    await expect(
      page.getByRole('link', { name: /^api_key canary fired once$/ }).count(),
    ).resolves.toBe(2);
    await shot('canary');
    await open('Canaries');
  });

  it('plants a redirect link with its destination and downloads a canary’s file', async () => {
    await page.getByLabel('Kind').selectOption('fast_redirect');
    await page.getByLabel('Redirect to').fill('https://intranet.example/wiki');
    await page.getByRole('button', { name: 'Plant canary' }).click();
    await page.getByText('Redirects to https://intranet.example/wiki').waitFor();

    await page.getByLabel('Kind').selectOption('qr_code');
    await expect(page.getByLabel('Redirect to').count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Plant canary' }).click();
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download qr-code.png' }).first().click(),
    ]);
    expect(file.suggestedFilename()).toBe('qr-code.png');
    const bytes = readFileSync(await file.path());
    expect(bytes.subarray(1, 4).toString()).toBe('PNG');
  });

  it('browses the evidence log, sees the chain intact, and verifies a record', async () => {
    await open('Evidence log');
    await expect(page.getByTestId('chain').textContent()).resolves.toMatch(
      /^Chain intact: \d+ records checked/,
    );
    const newest = page.getByRole('region', { name: 'Sealed records' }).getByRole('row').nth(1);
    await newest.getByRole('button', { name: /^Verify record/ }).click();
    await newest.getByText('Verified: hash recomputed and matches').waitFor();
    await expect(
      page.getByRole('button', { name: 'Download PDF report' }).isDisabled(),
    ).resolves.toBe(true);
    await shot('evidence');
    await page.setViewportSize({ width: 390, height: 844 });
    await shot('evidence-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('pages through a longer evidence log, 50 records at a time', async () => {
    const user = await t.mongo.db.collection('users').findOne({ email });
    const store = new EvidenceStore(t.mongo.db, () => new Date());
    for (let i = 0; i < 50; i++) {
      await store.append(String(user!._id), { kind: 'test.note', data: { i } });
    }
    await page.reload();
    const rows = page.getByRole('region', { name: 'Sealed records' }).getByRole('row');
    await page.getByRole('button', { name: 'Load older records' }).click();
    await page.getByRole('button', { name: 'Load older records' }).waitFor({ state: 'detached' });
    const total = await t.mongo.db
      .collection('evidence')
      .countDocuments({ accountId: String(user!._id) });
    expect(await rows.count()).toBe(total + 1); // and the header row
  });

  it('logs out, and a reload does not sign back in', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
  });
});
