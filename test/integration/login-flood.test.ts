import request from 'supertest';
import { deviceCookieOf, PASSWORD, signUpAndLogIn, uniqueEmail } from '../support/accounts';
import { createTestApp, manualClock, testConfig, type TestApp } from '../support/test-app';

// Each sign-in hashes at OWASP's scrypt cost, one at a time on a shared machine: slow, not failing.
jest.setTimeout(600_000);

/**
 * A flood of wrong passwords from many addresses (a botnet) trips no per-source streak; the failure
 * budget per process holds it, and the owner's known browser (device cookie) gets through.
 */
const BUDGET = 3;
let t: TestApp;
const clock = manualClock();

beforeAll(async () => {
  t = await createTestApp({
    clock: clock.clock,
    config: testConfig({ TRUST_PROXY: 'loopback', LOGIN_FAILURES_PER_MINUTE: String(BUDGET) }),
  });
});
afterAll(() => t.close());

let nextSource = 1;
const newSource = () => `198.18.0.${nextSource++}`;
const login = (email: string, password: string, cookie?: string) => {
  const req = request(t.app)
    .post('/api/auth/login')
    .set('X-Forwarded-For', newSource())
    .send({ email, password });
  return cookie ? req.set('Cookie', cookie) : req;
};

/** Signs up, signs in once from a fresh browser and keeps the device cookie it was given. */
async function knownBrowser() {
  const { email } = await signUpAndLogIn(t.app);
  const first = await login(email, PASSWORD);
  expect(first.status).toBe(200);
  const cookie = deviceCookieOf(first);
  expect(cookie).toMatch(/^svc_device=[A-Za-z0-9_-]{43}$/);
  expect(([] as string[]).concat(first.headers['set-cookie'] ?? []).join('\n')).toMatch(
    /svc_device=[^;]+; Path=\/api\/auth; Expires=[^;]+; HttpOnly; Secure; SameSite=Strict/,
  );
  return { email, cookie: cookie! };
}

/** Spends the whole minute's budget with wrong passwords for unknown emails, each from its own address. */
async function spendBudget() {
  for (let i = 0; i < BUDGET; i++) {
    expect((await login(uniqueEmail(), 'wrong password')).status).toBe(401);
  }
}

describe('failure budget across all sources', () => {
  beforeEach(() => clock.advance(61_000));

  it('when the minute has seen the budgeted failures from new addresses, then further unknown-device sign-ins get 429 login_throttled with Retry-After, known and unknown emails alike', async () => {
    const { email } = await knownBrowser();
    await spendBudget();
    const answers = [];
    for (const who of [email, uniqueEmail()]) {
      for (const password of [PASSWORD, 'wrong password']) {
        const res = await login(who, password);
        expect(res.status).toBe(429);
        answers.push([res.status, res.headers['retry-after'], res.body.detail]);
      }
    }
    // The same answer whatever the email and password: nothing tells which accounts exist.
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(answers[0]![1]).toBe('60');
    expect(answers[0]![2]).toMatchObject({ error: 'login_throttled', retry_after_seconds: 60 });
  });

  it('when the budget is spent, then the owner signs in from their known browser, and keeps its cookie', async () => {
    const { email, cookie } = await knownBrowser();
    await spendBudget();
    const res = await login(email, PASSWORD, cookie);
    expect(res.status).toBe(200);
    expect(res.body.token).toBeTruthy();
    expect(deviceCookieOf(res)).toBeUndefined();
  });

  it('when a device cookie of another account comes with the sign-in, then it counts as an unknown device', async () => {
    const mine = await knownBrowser();
    const other = await knownBrowser();
    await spendBudget();
    const res = await login(other.email, PASSWORD, mine.cookie);
    expect(res.status).toBe(429);
    expect(res.body.detail.error).toBe('login_throttled');
    expect((await login(other.email, PASSWORD, 'svc_device=' + 'A'.repeat(43))).status).toBe(429);
  });

  it('when a minute has passed since the budget was spent, then unknown devices may try again', async () => {
    const { email } = await knownBrowser();
    await spendBudget();
    expect((await login(email, PASSWORD)).status).toBe(429);
    clock.advance(60_000);
    const res = await login(email, PASSWORD);
    expect(res.status).toBe(200);
    expect(deviceCookieOf(res)).toBeTruthy();
  });

  it('when unknown-device sign-ins succeed, then they spend nothing of the budget', async () => {
    const { email } = await knownBrowser();
    for (let i = 0; i < BUDGET + 2; i++) expect((await login(email, PASSWORD)).status).toBe(200);
    await spendBudget();
    expect((await login(email, 'wrong password')).status).toBe(429);
  });
});
