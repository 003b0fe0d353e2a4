import type { Clock } from '../clock';
import type { PlanId } from '../plans';
import { DomainError } from '../errors';
import { newId } from '../ids';
import type { InvitesRepository } from './invites.repository';
import type { LoginThrottle, NewDevice, SignInAttempt } from './login-throttle';
import type { PasswordHasher, Verification } from './passwords';
import type { Session, SessionsRepository } from './sessions.repository';
import { newSecretToken, tokenDigest } from './tokens';
import { EmailTakenError, type User, type UsersRepository } from './users.repository';

export interface IssuedSession {
  token: string;
  refreshToken: string;
  userId: string;
  expiresAt: Date;
  refreshExpiresAt: Date;
}

/** A session, and the device cookie to set when the browser was not known yet. */
export type SignIn = IssuedSession & { newDevice?: NewDevice };

export interface SessionPrincipal {
  userId: string;
  sessionId: string;
}

export const SIGNUP_MODES = ['open', 'invite', 'closed'] as const;
export type SignupMode = (typeof SIGNUP_MODES)[number];

interface AuthServiceDeps {
  users: UsersRepository;
  sessions: SessionsRepository;
  invites: InvitesRepository;
  hasher: PasswordHasher;
  throttle: LoginThrottle;
  clock: Clock;
  sessionTtlMs: number;
  refreshTtlMs: number;
  signupMode: SignupMode;
  /** The plan a new account starts on (DEFAULT_PLAN). */
  defaultPlan: PlanId;
}

const INVALID_LOGIN = 'Invalid email or password';
const INVALID_REFRESH = 'Invalid or expired refresh cookie: log in again';
const REUSED_REFRESH =
  'This refresh cookie was already used once, so it may have been copied: the session is ended, log in again';

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export class AuthService {
  constructor(private readonly deps: AuthServiceDeps) {}

  /** `inviteCode` is needed (and used up) when SIGNUP_MODE is `invite`. */
  async signup(email: string, password: string, inviteCode?: string): Promise<User> {
    const { users, invites, hasher, clock, signupMode } = this.deps;
    if (signupMode === 'closed') {
      throw new DomainError('forbidden', {
        error: 'signup_closed',
        message: 'Sign-up is closed on this service: ask its operator for an account',
      });
    }
    const normalised = normaliseEmail(email);
    const codeHash = inviteCode ? tokenDigest(inviteCode) : undefined;
    if (signupMode === 'invite') {
      // Checked before the costly hash, used up only once the account can be made.
      if (!codeHash || !(await invites.isValid(codeHash, normalised, clock()))) {
        throw new DomainError('forbidden', {
          error: 'invite_required',
          message: 'invite_code: missing, expired, or not for this email address',
        });
      }
    }
    const passwordHash = await hasher.hash(password);
    const invite =
      signupMode === 'invite' && codeHash
        ? await invites.consume(codeHash, normalised, clock())
        : undefined;
    if (invite === null) {
      throw new DomainError('forbidden', {
        error: 'invite_required',
        message: 'invite_code: already used',
      });
    }
    try {
      return await users.create(normalised, passwordHash, clock(), this.deps.defaultPlan);
    } catch (err) {
      if (invite) await invites.restore(invite);
      if (err instanceof EmailTakenError) {
        throw new DomainError('conflict', 'email: already registered');
      }
      throw err;
    }
  }

  /**
   * Unknown email and wrong password give the same answer after the same amount of work, and
   * count towards the same throttle and failure budget; a held-back name, source or device, or
   * a spent budget, is refused before any hashing. `deviceToken` is the browser's device cookie:
   * a sign-in without a live one for this email hands out a new one.
   */
  async login(
    email: string,
    password: string,
    source: string | undefined,
    deviceToken?: string,
  ): Promise<SignIn> {
    const { throttle } = this.deps;
    const normalisedEmail = normaliseEmail(email);
    const device = await throttle.recognise(normalisedEmail, deviceToken);
    const who: SignInAttempt = { normalisedEmail, source, device };
    return throttle.attempt(who, () => this.checkedLogin(who, password));
  }

  private async checkedLogin(who: SignInAttempt, password: string): Promise<SignIn> {
    const { users, hasher, throttle } = this.deps;
    const notFailed = throttle.admit(who);
    let user: User | null;
    let verification: Verification;
    try {
      await throttle.check(who);
      user = await users.findByEmail(who.normalisedEmail);
      const stored = user?.passwordHash ?? (await hasher.decoyHash());
      verification = await hasher.verify(password, stored, {
        whenItsTurn: () => throttle.check(who),
        priority: who.device ? 'first' : 'normal',
      });
    } catch (err) {
      notFailed();
      throw err;
    }
    if (!user || !verification.valid) {
      await throttle.failed(who);
      throw new DomainError('unauthenticated', INVALID_LOGIN);
    }
    notFailed();
    await throttle.succeeded(who);
    if (user.disabledAt) {
      throw new DomainError(
        'forbidden',
        'This account is disabled: ask the operator of this service',
      );
    }
    if (user.erasingAt) {
      throw new DomainError('forbidden', 'This account is being erased at its own request');
    }
    const now = this.deps.clock();
    if (verification.outdated) {
      await users.setPasswordHash(user.id, await hasher.hash(password), now, user.passwordHash);
    }

    await this.deps.sessions.deleteExpired(user.id, now);
    const { secrets, issue } = this.newSecrets(now);
    const session: Session = { id: newId('ses'), userId: user.id, createdAt: now, ...secrets };
    await this.deps.sessions.create(session);
    const newDevice = who.device ? undefined : await throttle.rememberDevice(who.normalisedEmail);
    return { ...issue(user.id), newDevice };
  }

  /**
   * Swaps both halves: the old bearer token and the old cookie stop working. A cookie that was
   * already swapped away coming back means two holders (one of them likely a thief): the session
   * ends for both.
   */
  async refresh(refreshToken: string): Promise<IssuedSession> {
    const now = this.deps.clock();
    const { secrets, issue } = this.newSecrets(now);
    const digest = tokenDigest(refreshToken);
    const session = await this.deps.sessions.rotate(digest, now, secrets);
    if (session) return issue(session.userId);
    const reused = await this.deps.sessions.findRetired(digest);
    if (reused) {
      await this.deps.sessions.delete(reused.sessionId);
      throw new DomainError('unauthenticated', {
        error: 'refresh_reused',
        message: REUSED_REFRESH,
      });
    }
    throw new DomainError('unauthenticated', INVALID_REFRESH);
  }

  /**
   * The signed-in user's new password; the current one is asked again (and throttled like a sign
   * in, so a stolen session token is no password-guessing oracle). Other sessions end.
   */
  async changePassword(
    principal: SessionPrincipal,
    current: string,
    next: string,
    source: string | undefined,
  ): Promise<void> {
    const { users, hasher, sessions, clock } = this.deps;
    const user = await this.confirmPassword(principal, current, 'current_password', source);
    await users.setPasswordHash(user.id, await hasher.hash(next), clock());
    await sessions.deleteAllOf(user.id, principal.sessionId);
  }

  /**
   * The session's account, once `password` is its password: asked again before what a stolen
   * session token alone must not do, and throttled like a sign in (no password-guessing oracle).
   * `field` names the body field in the refusal.
   */
  async confirmPassword(
    principal: SessionPrincipal,
    password: string,
    field: string,
    source: string | undefined,
  ): Promise<User> {
    const { users, hasher, throttle } = this.deps;
    const user = await users.findById(principal.userId);
    if (!user) {
      throw new DomainError('unauthenticated', 'The account of this session no longer exists');
    }
    const who: SignInAttempt = { normalisedEmail: user.email, source };
    const throttled = () => throttle.check(who);
    await throttle.attempt(who, async () => {
      await throttled();
      if (!(await hasher.verify(password, user.passwordHash, { whenItsTurn: throttled })).valid) {
        await throttle.failed(who);
        throw new DomainError('forbidden', `${field}: does not match the account password`);
      }
      await throttle.succeeded(who);
    });
    return user;
  }

  async logout(credentials: { token?: string; refreshToken?: string }): Promise<void> {
    if (credentials.token)
      await this.deps.sessions.deleteByTokenHash(tokenDigest(credentials.token));
    if (credentials.refreshToken) {
      await this.deps.sessions.deleteByRefreshHash(tokenDigest(credentials.refreshToken));
    }
  }

  async authenticate(token: string): Promise<SessionPrincipal | null> {
    const session = await this.deps.sessions.findByTokenHash(tokenDigest(token), this.deps.clock());
    return session && { userId: session.userId, sessionId: session.id };
  }

  private newSecrets(now: Date) {
    const token = newSecretToken();
    const refreshToken = newSecretToken();
    const expiresAt = new Date(now.getTime() + this.deps.sessionTtlMs);
    const refreshExpiresAt = new Date(now.getTime() + this.deps.refreshTtlMs);
    return {
      secrets: {
        tokenHash: tokenDigest(token),
        tokenExpiresAt: expiresAt,
        refreshHash: tokenDigest(refreshToken),
        refreshExpiresAt,
      },
      issue: (userId: string): IssuedSession => ({
        token,
        refreshToken,
        userId,
        expiresAt,
        refreshExpiresAt,
      }),
    };
  }
}
