import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Express } from 'express';
import request from 'supertest';

export const PASSWORD = 'correct horse battery staple';

export interface SignedIn {
  userId: string;
  email: string;
  token: string;
  /** The `svc_refresh=<value>` pair, ready for a Cookie header. */
  refreshCookie: string;
}

export function uniqueEmail(): string {
  return `user-${randomUUID()}@example.com`;
}

export function refreshCookieOf(res: request.Response): string | undefined {
  return cookiePairOf(res, 'svc_refresh');
}

/** The `svc_device=<value>` pair a sign-in from a browser not known yet is given. */
export function deviceCookieOf(res: request.Response): string | undefined {
  return cookiePairOf(res, 'svc_device');
}

function cookiePairOf(res: request.Response, name: string): string | undefined {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  return cookies.find((c) => c.startsWith(`${name}=`))?.split(';')[0];
}

/** Signs up a fresh account and logs it in, through the real routes. */
export async function signUpAndLogIn(app: Express, email = uniqueEmail()): Promise<SignedIn> {
  const signup = await request(app).post('/api/auth/signup').send({ email, password: PASSWORD });
  if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${signup.text}`);
  const login = await request(app).post('/api/auth/login').send({ email, password: PASSWORD });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${login.text}`);
  const refreshCookie = refreshCookieOf(login);
  if (!refreshCookie) throw new Error('login set no refresh cookie');
  return { userId: signup.body.user_id, email, token: login.body.token, refreshCookie };
}

export interface CreatedKey {
  key: string;
  id: string;
  prefix: string;
  scopes: string[];
}

/** Creates an API key through the real route, with a session token. */
export async function createKey(
  app: Express,
  token: string,
  body: { name?: string; scopes?: string[] } = {},
): Promise<CreatedKey> {
  const res = await request(app)
    .post('/api/auth/generate-key')
    .set('Authorization', `Bearer ${token}`)
    .send(body);
  if (res.status !== 201) throw new Error(`generate-key failed: ${res.status} ${res.text}`);
  return res.body as CreatedKey;
}

/** The real admin CLI's `set-role`, on a test's database; its output. */
export function setRole(
  config: { MONGODB_URI: string; MONGODB_DB: string },
  who: string,
  role: 'user' | 'operator',
): string {
  const run = spawnSync('node_modules/.bin/tsx', ['src/admin.cli.ts', 'set-role', who, role], {
    env: { ...process.env, MONGODB_URI: config.MONGODB_URI, MONGODB_DB: config.MONGODB_DB },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`set-role: ${run.status} ${run.stderr}`);
  return run.stdout;
}
