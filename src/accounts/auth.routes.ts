import type { RefusedCredential } from '../auth/api-key-auth';
import type { CookieOptions, Response } from 'express';
import { z } from 'zod';
import type { Config } from '../config';
import { DomainError } from '../errors';
import { operationsFor } from '../http/operation';
import { bearerToken } from '../auth/session-auth';
import type { AuthService, IssuedSession, SignIn } from './auth.service';

export const REFRESH_COOKIE = 'svc_refresh';
/** Marks a browser that signed in before (see LoginThrottle): its sign-ins skip the flood defences. */
export const DEVICE_COOKIE = 'svc_device';

export const newPassword = z.string().min(12, 'must be at least 12 characters').max(256);

export const credentialsSchema = z.object({
  email: z.email().max(254),
  password: newPassword,
  /** Needed when SIGNUP_MODE is `invite` (from `npm run admin -- invite <email>`). */
  invite_code: z.string().min(1).max(128).optional(),
});

export const loginSchema = z.object({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(256),
});

export const signupView = z.object({ user_id: z.string() }).meta({ id: 'SignedUp' });
/** A session: the bearer token, its account and expiry (the refresh half is the cookie). */
export const sessionView = z
  .object({
    token: z.string(),
    user_id: z.string(),
    expires_at: z.iso.datetime(),
  })
  .meta({ id: 'Session' });

export interface AuthRoutesDeps {
  auth: AuthService;
  config: Pick<Config, 'COOKIE_SECURE'>;
  refused: RefusedCredential;
}

const cookieOptions = (config: AuthRoutesDeps['config']): CookieOptions => ({
  httpOnly: true,
  sameSite: 'strict',
  secure: config.COOKIE_SECURE,
  path: '/api/auth',
});

function sendSession(
  res: Response,
  config: AuthRoutesDeps['config'],
  session: IssuedSession,
): z.output<typeof sessionView> {
  res.cookie(REFRESH_COOKIE, session.refreshToken, {
    ...cookieOptions(config),
    expires: session.refreshExpiresAt,
  });
  res.set('Cache-Control', 'no-store');
  return {
    token: session.token,
    user_id: session.userId,
    expires_at: session.expiresAt.toISOString(),
  };
}

const operation = operationsFor<AuthRoutesDeps>('Accounts');
const BUSY = 'Too many passwords are being hashed right now (`login_busy`, `Retry-After`)';

/** Sign-up, sign-in, the refresh cookie and sign-out: public, before any session exists. */
export const authOperations = [
  operation({
    operationId: 'signUp',
    method: 'post',
    path: '/api/auth/signup',
    summary: 'Create an account',
    description:
      '`SIGNUP_MODE=closed` refuses every sign-up; `SIGNUP_MODE=invite` needs the code from `npm run admin -- invite <email>`, for that email, used once.',
    auth: 'none',
    body: credentialsSchema,
    success: { status: 201, description: '`{user_id}`' },
    response: signupView,
    errors: {
      403: 'Sign-up is closed (`signup_closed`), or SIGNUP_MODE=invite and `invite_code` is missing, used, expired or for another email (`invite_required`)',
      409: 'Email already registered',
      503: BUSY,
    },
    examples: {
      body: { email: 'me@example.com', password: 'correct horse battery' },
      response: { user_id: 'usr_3f9c2a' },
    },
    handler: async ({ body }, { auth }) => {
      const user = await auth.signup(body.email, body.password, body.invite_code);
      return { user_id: user.id };
    },
  }),
  operation({
    operationId: 'logIn',
    method: 'post',
    path: '/api/auth/login',
    summary: 'Log in: a session token, the refresh cookie and, from a new browser, a device cookie',
    description:
      'Sets the `svc_refresh` cookie too, and `svc_device` the first time a browser signs in to this email (its later sign-ins skip the flood defences). A wrong password and an unknown email get the same 401; repeated failures are throttled.',
    auth: 'none',
    body: loginSchema,
    success: { status: 200, description: '`{token, user_id, expires_at}`' },
    response: sessionView,
    errors: {
      401: 'Invalid email or password',
      429: 'Too many failed sign-ins for this email, from this address, from this known device, or (from browsers not known to the email) in this minute (`login_throttled`, `Retry-After`)',
      503: BUSY,
    },
    examples: { body: { email: 'me@example.com', password: 'correct horse battery' } },
    handler: async ({ body: { email, password }, req, res }, { auth, config, refused }) => {
      let session: SignIn;
      try {
        session = await auth.login(email, password, req.ip, cookieOf(req.cookies, DEVICE_COOKIE));
      } catch (err) {
        // A decoy password (or any canary string) tried here fires, whichever email came with it,
        // also while the sign-in is held back.
        if (
          err instanceof DomainError &&
          (err.kind === 'unauthenticated' || err.kind === 'rate_limited')
        ) {
          await refused(req, 'password', [password]);
        }
        throw err;
      }
      if (session.newDevice) {
        res.cookie(DEVICE_COOKIE, session.newDevice.token, {
          ...cookieOptions(config),
          expires: session.newDevice.expiresAt,
        });
      }
      return sendSession(res, config, session);
    },
  }),
  operation({
    operationId: 'refreshSession',
    method: 'post',
    path: '/api/auth/refresh',
    summary: 'A new session token from the refresh cookie',
    description:
      'Rotates the cookie: the old token and cookie stop working. Presenting a cookie that was already rotated away ends that whole session.',
    auth: 'refreshCookie',
    success: { status: 200, description: '`{token, user_id, expires_at}`' },
    response: sessionView,
    errors: {
      401: 'Missing, expired or unknown cookie; a cookie already rotated away ends its whole session (`refresh_reused`)',
    },
    handler: async ({ req, res }, { auth, config }) => {
      const refreshToken = refreshCookie(req.cookies);
      if (!refreshToken) {
        throw new DomainError('unauthenticated', 'Missing refresh cookie: log in again');
      }
      try {
        return sendSession(res, config, await auth.refresh(refreshToken));
      } catch (err) {
        res.clearCookie(REFRESH_COOKIE, cookieOptions(config));
        throw err;
      }
    },
  }),
  operation({
    operationId: 'logOut',
    method: 'post',
    path: '/api/auth/logout',
    summary: 'End the session',
    auth: 'none',
    success: { status: 204, description: 'Done, no body' },
    handler: async ({ req, res }, { auth, config }) => {
      const token = bearerToken(req.get('authorization'));
      const refreshToken = refreshCookie(req.cookies);
      if (!token && !refreshToken) {
        throw new DomainError('unauthenticated', 'Missing session token or refresh cookie');
      }
      await auth.logout({ token, refreshToken });
      res.clearCookie(REFRESH_COOKIE, cookieOptions(config));
    },
  }),
];

function refreshCookie(cookies: unknown): string | undefined {
  return cookieOf(cookies, REFRESH_COOKIE);
}

function cookieOf(cookies: unknown, name: string): string | undefined {
  const value = (cookies as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}
