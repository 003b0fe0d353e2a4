import { connect } from 'node:net';
import { scryptSync } from 'node:crypto';
import request from 'supertest';
import { answerClientErrors } from '../../src/http/client-errors';
import { LOGIN_THROTTLE } from '../../src/accounts/login-throttle';
import {
  deviceCookieOf,
  PASSWORD,
  refreshCookieOf,
  signUpAndLogIn,
  uniqueEmail,
} from '../support/accounts';
import { createTestApp, manualClock, testConfig, type TestApp } from '../support/test-app';

// Many tests here hash tens of passwords at OWASP's scrypt cost (128 MiB each, one at a time); on a
// shared 2-core machine that can take minutes, which is slowness, not failure.
jest.setTimeout(600_000);

let t: TestApp;
const clock = manualClock();
const METRICS_TOKEN = 'metrics-token-0123456789';
const DOCS_TOKEN = 'docs-token-0123456789abc';

beforeAll(async () => {
  t = await createTestApp({
    clock: clock.clock,
    // Believe X-Forwarded-For from the test client, so each test signs in from its own source.
    config: testConfig({ TRUST_PROXY: 'loopback', METRICS_TOKEN, DOCS_TOKEN }),
  });
});
afterAll(() => t.close());

let nextSource = 1;
const newSource = () => `198.51.100.${nextSource++}`;
const login = (email: string, password: string, source: string) =>
  request(t.app).post('/api/auth/login').set('X-Forwarded-For', source).send({ email, password });
const me = (token: string, scheme = 'Bearer') =>
  request(t.app).get('/api/users/me').set('Authorization', `${scheme} ${token}`);

describe('sign-in throttling', () => {
  it('when one account fails 5 times, then the next attempt is 429 login_throttled with Retry-After, even with the right password', async () => {
    const { email } = await signUpAndLogIn(t.app);
    const source = newSource();
    for (let i = 0; i < 5; i++)
      expect((await login(email, 'wrong password', source)).status).toBe(401);
    const throttled = await login(email, PASSWORD, newSource());
    expect(throttled.status).toBe(429);
    expect(throttled.headers['retry-after']).toBe('1');
    expect(throttled.body.detail).toMatchObject({
      error: 'login_throttled',
      retry_after_seconds: 1,
    });
    expect(throttled.headers['x-request-id']).toBeTruthy();
  });

  it('when the wait has passed, then one more failure doubles it, and a success ends the streak', async () => {
    const { email } = await signUpAndLogIn(t.app);
    const source = newSource();
    for (let i = 0; i < 5; i++) await login(email, 'wrong password', source);
    clock.advance(1_000);
    expect((await login(email, 'wrong password', source)).status).toBe(401);
    const second = await login(email, 'wrong password', source);
    expect(second.status).toBe(429);
    expect(second.headers['retry-after']).toBe('2');
    clock.advance(2_000);
    expect((await login(email, PASSWORD, source)).status).toBe(200);
    // The streak is over: a single failure is not held back.
    expect((await login(email, 'wrong password', source)).status).toBe(401);
    expect((await login(email, PASSWORD, source)).status).toBe(200);
  });

  it('when the email is unknown, then it is throttled exactly as a known one (no enumeration)', async () => {
    const known = (await signUpAndLogIn(t.app)).email;
    const unknown = uniqueEmail();
    const answers = [];
    for (const email of [known, unknown]) {
      const source = newSource();
      for (let i = 0; i < 5; i++) await login(email, 'wrong password', source);
      const res = await login(email, 'wrong password', source);
      answers.push([res.status, res.headers['retry-after'], res.body]);
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]![0]).toBe(429);
  });

  it('when one source fails 20 times across accounts, then it is held back for every account', async () => {
    const source = newSource();
    for (let i = 0; i < 20; i++) {
      expect((await login(uniqueEmail(), 'wrong password', source)).status).toBe(401);
    }
    const { email } = await signUpAndLogIn(t.app);
    const res = await login(email, PASSWORD, source);
    expect(res.status).toBe(429);
    expect(res.body.detail.error).toBe('login_throttled');
    // Another source is not affected.
    expect((await login(email, PASSWORD, newSource())).status).toBe(200);
  });

  it('when a password hash has older parameters, then the next sign-in replaces it transparently', async () => {
    const { email, userId } = await signUpAndLogIn(t.app);
    const salt = Buffer.from('legacy-salt-0001');
    const key = scryptSync(PASSWORD, salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 << 20 });
    const legacy = ['scrypt', 15, 8, 1, salt.toString('base64'), key.toString('base64')].join('$');
    const users = t.mongo.db.collection<{ _id: string; passwordHash: string }>('users');
    await users.updateOne({ _id: userId }, { $set: { passwordHash: legacy } });
    expect((await login(email, PASSWORD, newSource())).status).toBe(200);
    const rehashed = (await users.findOne({ _id: userId }))?.passwordHash;
    expect(rehashed).toMatch(/^scrypt\$17\$8\$1\$/);
    expect((await login(email, PASSWORD, newSource())).status).toBe(200);
    expect((await login(email, 'wrong password', newSource())).status).toBe(401);
  });
});

describe('known devices (device cookies)', () => {
  const loginFrom = (email: string, password: string, cookie: string) =>
    login(email, password, newSource()).set('Cookie', cookie);
  async function knownBrowser() {
    const { email } = await signUpAndLogIn(t.app);
    const cookie = deviceCookieOf(await login(email, PASSWORD, newSource()));
    expect(cookie).toBeTruthy();
    return { email, cookie: cookie! };
  }

  it('when an attacker has locked the account from elsewhere, then its owner still signs in from their known browser', async () => {
    const { email, cookie } = await knownBrowser();
    const attacker = newSource();
    for (let i = 0; i < LOGIN_THROTTLE.account.free; i++) {
      expect((await login(email, 'wrong password', attacker)).status).toBe(401);
    }
    expect((await login(email, PASSWORD, newSource())).status).toBe(429);
    const res = await loginFrom(email, PASSWORD, cookie);
    expect(res.status).toBe(200);
    expect(deviceCookieOf(res)).toBeUndefined();
  });

  it('when a known browser itself fails 5 times (a stolen cookie guessing), then it is throttled by its own streak', async () => {
    const { email, cookie } = await knownBrowser();
    for (let i = 0; i < LOGIN_THROTTLE.account.free; i++) {
      expect((await loginFrom(email, 'wrong password', cookie)).status).toBe(401);
    }
    const res = await loginFrom(email, PASSWORD, cookie);
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body.detail.error).toBe('login_throttled');
    // Those failures were the cookie's, not the account's: another browser is not held back.
    expect((await login(email, PASSWORD, newSource())).status).toBe(200);
  });

  it('when the device cookie has expired, then the browser is a new one again and gets a new cookie', async () => {
    const { email, cookie } = await knownBrowser();
    clock.advance(LOGIN_THROTTLE.knownDeviceTtlMs + 1);
    const res = await loginFrom(email, PASSWORD, cookie);
    expect(res.status).toBe(200);
    expect(deviceCookieOf(res)).toBeTruthy();
    expect(deviceCookieOf(res)).not.toBe(cookie);
  });
});

describe('sessions', () => {
  it('when the scheme is written bearer, BEARER or Bearer, then the token is accepted (RFC 9110)', async () => {
    const { token } = await signUpAndLogIn(t.app);
    for (const scheme of ['bearer', 'BEARER', 'Bearer', 'bEaReR']) {
      expect((await me(token, scheme)).status).toBe(200);
    }
  });

  it('when a rotated refresh cookie is used again, then the whole session ends for both holders', async () => {
    const stolen = await signUpAndLogIn(t.app);
    const rotated = await request(t.app)
      .post('/api/auth/refresh')
      .set('Cookie', stolen.refreshCookie);
    expect(rotated.status).toBe(200);
    const reuse = await request(t.app)
      .post('/api/auth/refresh')
      .set('Cookie', stolen.refreshCookie);
    expect(reuse.status).toBe(401);
    expect(reuse.body.detail.error).toBe('refresh_reused');
    expect(
      (await request(t.app).post('/api/auth/refresh').set('Cookie', refreshCookieOf(rotated)!))
        .status,
    ).toBe(401);
    expect((await me(rotated.body.token)).status).toBe(401);
    // Another session of the same account is not part of that family.
    const other = await login(stolen.email, PASSWORD, newSource());
    expect((await me(other.body.token)).status).toBe(200);
  });
});

describe('password change', () => {
  const change = (token: string, body: object) =>
    request(t.app)
      .post('/api/users/me/password')
      .set('Authorization', `Bearer ${token}`)
      .set('X-Forwarded-For', newSource())
      .send(body);

  it('when the current password is wrong, then 403 and the password is unchanged', async () => {
    const { email, token } = await signUpAndLogIn(t.app);
    const res = await change(token, {
      current_password: 'not it',
      new_password: 'a new password 123',
    });
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/^current_password: /);
    expect((await login(email, PASSWORD, newSource())).status).toBe(200);
  });

  it('when the new password is too short or missing, then 422 names body.new_password', async () => {
    const { token } = await signUpAndLogIn(t.app);
    const res = await change(token, { current_password: PASSWORD, new_password: 'short' });
    expect(res.status).toBe(422);
    expect(res.body.detail).toBe('body.new_password: must be at least 12 characters');
  });

  it('when there is no session, then 401', async () => {
    const res = await request(t.app)
      .post('/api/users/me/password')
      .send({ current_password: PASSWORD, new_password: 'a new password 123' });
    expect(res.status).toBe(401);
  });

  it('when the change succeeds, then this session stays, the others end, and only the new password works', async () => {
    const { email, token } = await signUpAndLogIn(t.app);
    const other = await login(email, PASSWORD, newSource());
    const res = await change(token, {
      current_password: PASSWORD,
      new_password: 'a new password 123',
    });
    expect(res.status).toBe(204);
    expect((await me(token)).status).toBe(200);
    expect((await me(other.body.token)).status).toBe(401);
    expect((await login(email, PASSWORD, newSource())).status).toBe(401);
    expect((await login(email, 'a new password 123', newSource())).status).toBe(200);
  });

  it('when the current password is guessed 5 times, then further guesses are throttled', async () => {
    const { token } = await signUpAndLogIn(t.app);
    for (let i = 0; i < 5; i++) {
      await change(token, { current_password: `guess ${i}`, new_password: 'a new password 123' });
    }
    const res = await change(token, {
      current_password: PASSWORD,
      new_password: 'a new password 123',
    });
    expect(res.status).toBe(429);
    expect(res.body.detail.error).toBe('login_throttled');
  });
});

describe('sign-up modes', () => {
  it('when SIGNUP_MODE is closed, then sign-up is 403 signup_closed and nothing is stored', async () => {
    const closed = await createTestApp({ config: testConfig({ SIGNUP_MODE: 'closed' }) });
    try {
      const res = await request(closed.app)
        .post('/api/auth/signup')
        .send({ email: uniqueEmail(), password: PASSWORD });
      expect(res.status).toBe(403);
      expect(res.body.detail.error).toBe('signup_closed');
      expect(await closed.mongo.db.collection('users').countDocuments()).toBe(0);
    } finally {
      await closed.close();
    }
  });
});

describe('operator routes', () => {
  it.each([
    ['/metrics', METRICS_TOKEN],
    ['/docs', DOCS_TOKEN],
    ['/openapi.json', DOCS_TOKEN],
    ['/docs/assets/reference.js', DOCS_TOKEN],
  ])('when %s has a token set, then only that bearer token gets in', async (path, token) => {
    const none = await request(t.app).get(path);
    expect(none.status).toBe(401);
    expect(none.type).toBe('application/json');
    expect(none.body.detail).toMatch(/Authorization: Bearer/);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    expect(
      (await request(t.app).get(path).set('Authorization', 'Bearer wrong-token-000000000')).status,
    ).toBe(401);
    const other = path === '/metrics' ? DOCS_TOKEN : METRICS_TOKEN;
    expect((await request(t.app).get(path).set('Authorization', `Bearer ${other}`)).status).toBe(
      401,
    );
    expect((await request(t.app).get(path).set('Authorization', `bearer ${token}`)).status).toBe(
      200,
    );
  });
});

describe('security headers', () => {
  it('when anything answers (JSON, error, HTML), then nosniff, no framing and a CSP come with it', async () => {
    const { token } = await signUpAndLogIn(t.app);
    const answers = [
      await request(t.app).get('/healthz'),
      await request(t.app).get('/no/such/route'),
      await me(token),
      await request(t.app).get('/r/some-token'),
      await request(t.app).get('/docs').set('Authorization', `Bearer ${DOCS_TOKEN}`),
    ];
    for (const res of answers) {
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['content-security-policy']).toMatch(/default-src 'none'/);
      expect(res.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
      expect(res.headers['referrer-policy']).toBe('no-referrer');
    }
    // The reference page runs this origin's scripts only (Redoc, served by the app), no inline one.
    expect(answers[4]!.headers['content-security-policy']).toMatch(/script-src 'self';/);
    expect(answers[4]!.headers['content-security-policy']).not.toMatch(/unsafe-eval|\*/);
  });
});

describe('every answer is JSON with a detail and an X-Request-ID', () => {
  it.each(['/r/%ZZ', '/api/verify/%', '/api/verify/%FF%FE', '/r/%E0%A4%A'])(
    'when the path %s has malformed percent-encoding, then 400, not a retryable 500',
    async (path) => {
      const res = await request(t.app).get(path);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ detail: 'path: malformed percent-encoding' });
      expect(res.headers['x-request-id']).toBeTruthy();
    },
  );

  it('when a JSON route gets a text/plain body, then 415 and nothing happens', async () => {
    const email = uniqueEmail();
    const res = await request(t.app)
      .post('/api/auth/signup')
      .set('Content-Type', 'text/plain')
      .send(JSON.stringify({ email, password: PASSWORD }));
    expect(res.status).toBe(415);
    expect(res.body.detail).toMatch(/^body: must be JSON/);
    expect(await t.mongo.db.collection('users').countDocuments({ email })).toBe(0);
  });

  it('when a request has no body and no Content-Type, then it is not refused as the wrong type', async () => {
    const { refreshCookie } = await signUpAndLogIn(t.app);
    const res = await request(t.app).post('/api/auth/refresh').set('Cookie', refreshCookie);
    expect(res.status).toBe(200);
  });

  it('when a query parameter is repeated or wrong, then 422 names query.<name>', async () => {
    const { token } = await signUpAndLogIn(t.app);
    const twice = await request(t.app)
      .get('/api/threat-events?limit=1&limit=2')
      .set('Authorization', `Bearer ${token}`);
    expect(twice.status).toBe(422);
    expect(twice.body.detail).toBe('query.limit: given more than once');
    const wrong = await request(t.app)
      .get('/api/threat-events?limit=0')
      .set('Authorization', `Bearer ${token}`);
    expect(wrong.body.detail).toMatch(/^query\.limit: /);
  });

  it('when a time range ends before it starts, then 422 names query.until, on threat events and the threat log', async () => {
    const { token } = await signUpAndLogIn(t.app);
    for (const path of ['/api/threat-events', '/api/threat-log']) {
      const res = await request(t.app)
        .get(`${path}?since=2026-11-23T23:16:01Z&until=2026-11-23T23:14:01Z`)
        .set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(422);
      expect(res.body.detail).toBe('query.until: not before since');
      const same = await request(t.app)
        .get(`${path}?since=2026-11-23T23:14:01Z&until=2026-11-23T23:14:01Z`)
        .set('Authorization', `Bearer ${token}`);
      expect(same.status).toBe(200);
    }
  });

  it('when a body field inside a list is wrong, then 422 names body.<field>[<index>]', async () => {
    const { token } = await signUpAndLogIn(t.app);
    const res = await request(t.app)
      .post('/api/auth/generate-key')
      .set('Authorization', `Bearer ${token}`)
      .send({ scopes: ['shield:read', 'canaries:read', 'audit:read', 'x'.repeat(101)] });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/^body\.scopes\[3\]: /);
  });

  describe('requests Node refuses before Express', () => {
    let port: number;
    let close: () => void;
    beforeAll(async () => {
      const server = t.app.listen(0, '127.0.0.1');
      answerClientErrors(server);
      await new Promise((resolve) => server.once('listening', resolve));
      port = (server.address() as { port: number }).port;
      close = () => server.close();
    });
    afterAll(() => close());

    const raw = (text: string) =>
      new Promise<string>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(text));
        let out = '';
        socket.on('data', (chunk: Buffer) => (out += chunk.toString()));
        socket.on('close', () => resolve(out));
        socket.on('error', () => resolve(out));
      });
    const parse = (answer: string) => {
      const [head, body] = answer.split('\r\n\r\n');
      return { status: Number(head!.split(' ')[1]), head: head!, body: JSON.parse(body!) };
    };

    it('when the headers are 20 KB, then 431 JSON with a detail and an X-Request-ID', async () => {
      const res = parse(
        await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
      );
      expect(res.status).toBe(431);
      expect(res.head).toMatch(/\r\nContent-Type: application\/json/);
      expect(res.head).toMatch(/\r\nX-Request-ID: [0-9a-f-]{36}/);
      expect(res.body).toEqual({ detail: 'headers: larger than the server accepts' });
    });

    it('when the request line is garbage, then 400 JSON with a detail and an X-Request-ID', async () => {
      const res = parse(await raw('GARBAGE\r\n\r\n'));
      expect(res.status).toBe(400);
      expect(res.head).toMatch(/\r\nX-Request-ID: /);
      expect(res.body).toEqual({ detail: 'request: not valid HTTP/1.1' });
    });
  });
});
