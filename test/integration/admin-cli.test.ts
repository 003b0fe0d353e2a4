import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { PASSWORD, signUpAndLogIn, uniqueEmail } from '../support/accounts';
import { createTestApp, testConfig, type TestApp } from '../support/test-app';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

function admin(...args: string[]) {
  return adminOn(t, ...args);
}

function adminOn(app: TestApp, ...args: string[]) {
  return adminWith(
    { MONGODB_URI: app.config.MONGODB_URI, MONGODB_DB: app.config.MONGODB_DB },
    args,
  );
}

function adminWith(env: Record<string, string>, args: string[]) {
  return spawnSync('node_modules/.bin/tsx', ['src/admin.cli.ts', ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
}

const login = (email: string, password: string) =>
  request(t.app).post('/api/auth/login').send({ email, password });
const me = (token: string) =>
  request(t.app).get('/api/users/me').set('Authorization', `Bearer ${token}`);
const oneTimePassword = (stdout: string) => /one-time password: (\S+)/.exec(stdout)?.[1] ?? '';

describe('npm run admin -- set-plan', () => {
  it('when given an email and a plan, then the account moves to that plan', async () => {
    const { email, token } = await signUpAndLogIn(t.app);
    const run = admin('set-plan', email, 'pro');
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('plan free → pro');
    const res = await request(t.app).get('/api/users/me').set('Authorization', `Bearer ${token}`);
    expect(res.body.plan).toBe('pro');
  });

  it('when given a user id, then that account moves', async () => {
    const { userId } = await signUpAndLogIn(t.app);
    expect(admin('set-plan', userId, 'enterprise').status).toBe(0);
    expect(await t.mongo.db.collection('users').findOne({ _id: userId as never })).toMatchObject({
      plan: 'enterprise',
    });
  });

  it('when the plan is unknown, then exit 2 with the usage and nothing changes', async () => {
    const { userId } = await signUpAndLogIn(t.app);
    const run = admin('set-plan', userId, 'platinum');
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('set-plan <email or user id>');
    expect(await t.mongo.db.collection('users').findOne({ _id: userId as never })).toMatchObject({
      plan: 'free',
    });
  });

  it('when no account matches, then exit 1 naming it', () => {
    const run = admin('set-plan', 'nobody@example.com', 'pro');
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('No account matches nobody@example.com');
  });
});

describe('npm run admin -- account commands', () => {
  it('when create-user is run, then the account exists and its one-time password signs in', async () => {
    const email = uniqueEmail();
    const run = admin('create-user', email);
    expect(run.status).toBe(0);
    const password = oneTimePassword(run.stdout);
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect((await login(email, password)).status).toBe(200);
  });

  it("when DEFAULT_PLAN is set, then create-user's account starts on it", async () => {
    const email = uniqueEmail();
    const run = adminWith(
      { MONGODB_URI: t.config.MONGODB_URI, MONGODB_DB: t.config.MONGODB_DB, DEFAULT_PLAN: 'pro' },
      ['create-user', email],
    );
    expect(run.status).toBe(0);
    expect(await t.mongo.db.collection('users').findOne({ email })).toMatchObject({ plan: 'pro' });
  });

  it('when create-user names a registered email, then exit 1 and the account is unchanged', async () => {
    const { email } = await signUpAndLogIn(t.app);
    const run = admin('create-user', email);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('already registered');
    expect((await login(email, PASSWORD)).status).toBe(200);
  });

  it('when reset-password is run, then the old password and every session stop working', async () => {
    const { email, token } = await signUpAndLogIn(t.app);
    const run = admin('reset-password', email);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('1 session(s) ended');
    expect((await me(token)).status).toBe(401);
    expect((await login(email, PASSWORD)).status).toBe(401);
    expect((await login(email, oneTimePassword(run.stdout))).status).toBe(200);
  });

  it('when revoke-sessions is run, then every session ends and the password still works', async () => {
    const { email, token, userId } = await signUpAndLogIn(t.app);
    const second = await login(email, PASSWORD);
    const run = admin('revoke-sessions', userId);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('2 session(s) ended');
    expect((await me(token)).status).toBe(401);
    expect((await me(second.body.token)).status).toBe(401);
    expect((await login(email, PASSWORD)).status).toBe(200);
  });

  it('when a command lacks its argument or names nobody, then usage (2) or not found (1)', () => {
    expect(admin('reset-password').status).toBe(2);
    expect(admin('invite', 'not-an-email').status).toBe(2);
    expect(admin('revoke-sessions', 'nobody@example.com').status).toBe(1);
    expect(admin('no-such-command').stderr).toContain('revoke-sessions');
  });

  it('when sign-up is by invitation, then only the invited email with its code gets in, once', async () => {
    const invited = await createTestApp({ config: testConfig({ SIGNUP_MODE: 'invite' }) });
    try {
      const email = uniqueEmail();
      const run = adminOn(invited, 'invite', email, '2');
      expect(run.status).toBe(0);
      const code = /: (\S+)$/.exec(run.stdout.trim())?.[1] ?? '';
      const signup = (body: object) => request(invited.app).post('/api/auth/signup').send(body);
      const noCode = await signup({ email, password: PASSWORD });
      expect(noCode.status).toBe(403);
      expect(noCode.body.detail.error).toBe('invite_required');
      const otherEmail = await signup({
        email: uniqueEmail(),
        password: PASSWORD,
        invite_code: code,
      });
      expect(otherEmail.status).toBe(403);
      expect(await invited.mongo.db.collection('users').countDocuments()).toBe(0);
      expect((await signup({ email, password: PASSWORD, invite_code: code })).status).toBe(201);
      const again = await signup({
        email: email.toUpperCase(),
        password: PASSWORD,
        invite_code: code,
      });
      expect(again.status).toBe(403);
      expect(await invited.mongo.db.collection('users').countDocuments()).toBe(1);
    } finally {
      await invited.close();
    }
  });
});

describe('npm run admin -- evidence-key (node dist/src/admin.cli.js evidence-key in the image)', () => {
  // No database: the compose file's evidence-key job runs before any exists, without a network.
  const noDatabase = { MONGODB_URI: '' };

  it('when run, then it prints a key for the PUBLIC_BASE_URL host, and its public key on stderr', () => {
    const run = adminWith({ ...noDatabase, PUBLIC_BASE_URL: 'https://t.example.com' }, [
      'evidence-key',
    ]);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^PRIVATE\+KEY\+t\.example\.com\/evidence\+[0-9a-f]{8}\+\S+\n$/);
    expect(run.stderr).toMatch(/public key \(verifier key\): t\.example\.com\/evidence\+/);
  });

  it('when given --file, then it makes an owner-only key once and keeps it on later runs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'evidence-key-'));
    const file = join(dir, 'keys', 'evidence.key');
    try {
      const first = adminWith(noDatabase, ['evidence-key', '--file', file]);
      expect([first.status, first.stdout]).toEqual([0, '']);
      expect(first.stderr).toContain(`made the evidence signing key in ${file}`);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const key = readFileSync(file, 'utf8');
      expect(key).toMatch(/^PRIVATE\+KEY\+localhost:8080\/evidence\+/);

      const second = adminWith(noDatabase, ['evidence-key', '--file', file]);
      expect(second.status).toBe(0);
      expect(second.stderr).toContain('kept the evidence signing key');
      expect(readFileSync(file, 'utf8')).toBe(key);
      const publicKey = (out: string) => /verifier key\): (\S+)/.exec(out)?.[1];
      expect(publicKey(second.stderr)).toBe(publicKey(first.stderr));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when given an unknown option or two origins, then usage and exit 2', () => {
    for (const args of [['--bogus'], ['a.example/evidence', 'b.example/evidence']]) {
      const run = adminWith(noDatabase, ['evidence-key', ...args]);
      expect([run.status, run.stdout]).toEqual([2, '']);
      expect(run.stderr).toContain('evidence-key --file <path>');
    }
  });
});
