import request from 'supertest';
import { createTestApp, manualClock, type TestApp } from '../support/test-app';
import {
  createKey,
  PASSWORD,
  refreshCookieOf,
  signUpAndLogIn,
  uniqueEmail,
} from '../support/accounts';

const clock = manualClock();
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ clock: clock.clock });
});
afterAll(() => t.close());

const me = (token: string) =>
  request(t.app).get('/api/users/me').set('Authorization', `Bearer ${token}`);

describe('signup', () => {
  it('when the email is new, then 201 returns the account id and the plan is free', async () => {
    const { userId, token, email } = await signUpAndLogIn(t.app);
    expect(userId).toMatch(/^usr_[A-Za-z0-9_-]{16}$/);
    const res = await me(token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      user_id: userId,
      email,
      plan: 'free',
      role: 'user',
      created_at: expect.any(String),
    });
  });

  it('when the email is taken in any letter case, then 409 and no second account', async () => {
    const email = uniqueEmail();
    await request(t.app).post('/api/auth/signup').send({ email, password: PASSWORD }).expect(201);
    const res = await request(t.app)
      .post('/api/auth/signup')
      .send({ email: email.toUpperCase(), password: PASSWORD });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ detail: 'email: already registered' });
    expect(await t.mongo.db.collection('users').countDocuments({ email })).toBe(1);
  });

  it('when the email or password is invalid, then 422 names the field and nothing is stored', async () => {
    const before = await t.mongo.db.collection('users').countDocuments();
    const badEmail = await request(t.app)
      .post('/api/auth/signup')
      .send({ email: 'nope', password: PASSWORD });
    expect(badEmail.status).toBe(422);
    expect(badEmail.body.detail).toMatch(/^body\.email: /);
    const shortPassword = await request(t.app)
      .post('/api/auth/signup')
      .send({ email: uniqueEmail(), password: 'short' });
    expect(shortPassword.status).toBe(422);
    expect(shortPassword.body).toEqual({ detail: 'body.password: must be at least 12 characters' });
    expect(await t.mongo.db.collection('users').countDocuments()).toBe(before);
  });

  it('when the password is stored, then only a scrypt hash of it is', async () => {
    const { email } = await signUpAndLogIn(t.app);
    const user = await t.mongo.db.collection('users').findOne({ email });
    expect(user?.passwordHash).toMatch(/^scrypt\$17\$8\$1\$/);
    expect(JSON.stringify(user)).not.toContain(PASSWORD);
  });
});

describe('login', () => {
  it('when the credentials are right, then a 12 h token and an HttpOnly strict refresh cookie', async () => {
    const email = uniqueEmail();
    await request(t.app).post('/api/auth/signup').send({ email, password: PASSWORD });
    const res = await request(t.app).post('/api/auth/login').send({ email, password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Date(res.body.expires_at).getTime() - clock.clock().getTime()).toBe(12 * 3_600_000);
    const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).join();
    expect(cookie).toMatch(/svc_refresh=[A-Za-z0-9_-]{43}/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/Path=\/api\/auth/);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('when the password is wrong or the email unknown, then both answers are identical', async () => {
    const { email } = await signUpAndLogIn(t.app);
    const wrong = await request(t.app)
      .post('/api/auth/login')
      .send({ email, password: 'not the password' });
    const unknown = await request(t.app)
      .post('/api/auth/login')
      .send({ email: uniqueEmail(), password: PASSWORD });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body).toEqual({ detail: 'Invalid email or password' });
  });

  it('when a session exists, then the database holds only digests of its token and cookie', async () => {
    const { userId, token, refreshCookie } = await signUpAndLogIn(t.app);
    const stored = await t.mongo.db.collection('sessions').find({ userId }).toArray();
    expect(stored).toHaveLength(1);
    const text = JSON.stringify(stored);
    expect(text).not.toContain(token);
    expect(text).not.toContain(refreshCookie.split('=')[1]);
  });
});

describe('session token', () => {
  it('when the token is wrong, missing or an API key, then 401', async () => {
    expect((await me('x'.repeat(43))).status).toBe(401);
    const missing = await request(t.app).get('/api/users/me');
    expect(missing.status).toBe(401);
    expect(missing.body.detail).toMatch(/^Missing session token/);
    const { token } = await signUpAndLogIn(t.app);
    const { key } = await createKey(t.app, token);
    const apiKey = await request(t.app).get('/api/users/me').set('X-API-Key', key);
    expect(apiKey.status).toBe(401);
    expect(apiKey.body.detail).toMatch(/API keys are not accepted/);
    const basic = await request(t.app).get('/api/users/me').set('Authorization', 'Basic dTpw');
    expect(basic.status).toBe(401);
  });

  it('when 12 h have passed, then the token stops working but the cookie still refreshes', async () => {
    const { token, refreshCookie } = await signUpAndLogIn(t.app);
    clock.advance(12 * 3_600_000 + 1_000);
    expect((await me(token)).status).toBe(401);
    const refreshed = await request(t.app).post('/api/auth/refresh').set('Cookie', refreshCookie);
    expect(refreshed.status).toBe(200);
    expect((await me(refreshed.body.token)).status).toBe(200);
  });
});

describe('refresh', () => {
  it('when the cookie is valid, then a new token replaces the old one and the cookie rotates', async () => {
    const { token, refreshCookie, userId } = await signUpAndLogIn(t.app);
    const res = await request(t.app).post('/api/auth/refresh').set('Cookie', refreshCookie);
    expect(res.status).toBe(200);
    expect(res.body.user_id).toBe(userId);
    expect(res.body.token).not.toBe(token);
    const rotated = refreshCookieOf(res);
    expect(rotated).toBeDefined();
    expect(rotated).not.toBe(refreshCookie);

    expect((await me(res.body.token)).status).toBe(200);
    expect((await me(token)).status).toBe(401);
    const replay = await request(t.app).post('/api/auth/refresh').set('Cookie', refreshCookie);
    expect(replay.status).toBe(401);
  });

  it('when there is no cookie, then 401', async () => {
    const res = await request(t.app).post('/api/auth/refresh');
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/refresh cookie/);
  });

  it('when the cookie is past its lifetime, then 401 and the cookie is cleared', async () => {
    const { refreshCookie } = await signUpAndLogIn(t.app);
    clock.advance(7 * 24 * 3_600_000 + 1_000);
    const res = await request(t.app).post('/api/auth/refresh').set('Cookie', refreshCookie);
    expect(res.status).toBe(401);
    expect(String(res.headers['set-cookie'])).toMatch(/svc_refresh=;/);
  });
});

describe('logout', () => {
  it('when the session logs out, then neither its token nor its cookie works again', async () => {
    const { token, refreshCookie } = await signUpAndLogIn(t.app);
    const res = await request(t.app)
      .post('/api/auth/logout')
      .set('Authorization', `Bearer ${token}`)
      .set('Cookie', refreshCookie);
    expect(res.status).toBe(204);
    expect((await me(token)).status).toBe(401);
    expect(
      (await request(t.app).post('/api/auth/refresh').set('Cookie', refreshCookie)).status,
    ).toBe(401);
  });

  it('when only the cookie is sent, then that session ends', async () => {
    const { token, refreshCookie } = await signUpAndLogIn(t.app);
    await request(t.app).post('/api/auth/logout').set('Cookie', refreshCookie).expect(204);
    expect((await me(token)).status).toBe(401);
  });

  it('when nothing identifies a session, then 401', async () => {
    expect((await request(t.app).post('/api/auth/logout')).status).toBe(401);
  });
});
