import { spawnSync } from 'node:child_process';
import request from 'supertest';
import { signUpAndLogIn } from '../support/accounts';
import { createTestApp, type TestApp } from '../support/test-app';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

function admin(...args: string[]) {
  return spawnSync('node_modules/.bin/tsx', ['src/admin.cli.ts', ...args], {
    env: { ...process.env, MONGODB_URI: t.config.MONGODB_URI, MONGODB_DB: t.config.MONGODB_DB },
    encoding: 'utf8',
  });
}

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
    expect(run.stderr).toContain('Usage: npm run admin -- set-plan');
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
