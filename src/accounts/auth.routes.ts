import type { RefusedCredential } from '../http/api-key-auth';
import { Router, type CookieOptions, type Response } from 'express';
import { z } from 'zod';
import type { Config } from '../config';
import { AppError } from '../http/errors';
import { bearerToken } from '../http/session-auth';
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

export const signupView = z.object({ user_id: z.string() });
/** A session: the bearer token, its account and expiry (the refresh half is the cookie). */
export const sessionView = z.object({
  token: z.string(),
  user_id: z.string(),
  expires_at: z.iso.datetime(),
});

export function authRoutes(
  auth: AuthService,
  config: Pick<Config, 'COOKIE_SECURE'>,
  refused: RefusedCredential,
): Router {
  const router = Router();
  const cookieOptions: CookieOptions = {
    httpOnly: true,
    sameSite: 'strict',
    secure: config.COOKIE_SECURE,
    path: '/api/auth',
  };

  const sendSession = (res: Response, session: IssuedSession) => {
    res.cookie(REFRESH_COOKIE, session.refreshToken, {
      ...cookieOptions,
      expires: session.refreshExpiresAt,
    });
    res.set('Cache-Control', 'no-store').json({
      token: session.token,
      user_id: session.userId,
      expires_at: session.expiresAt.toISOString(),
    } satisfies z.output<typeof sessionView>);
  };

  router.post('/signup', async (req, res) => {
    const { email, password, invite_code } = credentialsSchema.parse(req.body);
    const user = await auth.signup(email, password, invite_code);
    res.status(201).json({ user_id: user.id } satisfies z.output<typeof signupView>);
  });

  router.post('/login', async (req, res) => {
    const { email, password } = loginSchema.parse(req.body);
    let session: SignIn;
    try {
      session = await auth.login(email, password, req.ip, cookieOf(req.cookies, DEVICE_COOKIE));
    } catch (err) {
      // A decoy password (or any canary string) tried here fires, whichever email came with it,
      // also while the sign-in is held back.
      if (err instanceof AppError && (err.status === 401 || err.status === 429)) {
        await refused(req, 'password', [password]);
      }
      throw err;
    }
    if (session.newDevice) {
      res.cookie(DEVICE_COOKIE, session.newDevice.token, {
        ...cookieOptions,
        expires: session.newDevice.expiresAt,
      });
    }
    sendSession(res, session);
  });

  router.post('/refresh', async (req, res) => {
    const refreshToken = refreshCookie(req.cookies);
    if (!refreshToken) throw new AppError(401, 'Missing refresh cookie: log in again');
    try {
      sendSession(res, await auth.refresh(refreshToken));
    } catch (err) {
      res.clearCookie(REFRESH_COOKIE, cookieOptions);
      throw err;
    }
  });

  router.post('/logout', async (req, res) => {
    const token = bearerToken(req.get('authorization'));
    const refreshToken = refreshCookie(req.cookies);
    if (!token && !refreshToken) throw new AppError(401, 'Missing session token or refresh cookie');
    await auth.logout({ token, refreshToken });
    res.clearCookie(REFRESH_COOKIE, cookieOptions).status(204).end();
  });

  return router;
}

function refreshCookie(cookies: unknown): string | undefined {
  return cookieOf(cookies, REFRESH_COOKIE);
}

function cookieOf(cookies: unknown, name: string): string | undefined {
  const value = (cookies as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}
