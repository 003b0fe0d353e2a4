import type { Clock } from '../clock';
import { AppError } from '../http/errors';
import { newId } from '../ids';
import { decoyPasswordHash, hashPassword, verifyPassword } from './passwords';
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

export interface SessionPrincipal {
  userId: string;
  sessionId: string;
}

interface AuthServiceDeps {
  users: UsersRepository;
  sessions: SessionsRepository;
  clock: Clock;
  sessionTtlMs: number;
  refreshTtlMs: number;
}

const INVALID_LOGIN = 'Invalid email or password';
const INVALID_REFRESH = 'Invalid or expired refresh cookie: log in again';

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export class AuthService {
  constructor(private readonly deps: AuthServiceDeps) {}

  async signup(email: string, password: string): Promise<User> {
    const passwordHash = await hashPassword(password);
    try {
      return await this.deps.users.create(normaliseEmail(email), passwordHash, this.deps.clock());
    } catch (err) {
      if (err instanceof EmailTakenError) throw new AppError(409, 'email: already registered');
      throw err;
    }
  }

  /** Unknown email and wrong password give the same answer after the same amount of work. */
  async login(email: string, password: string): Promise<IssuedSession> {
    const user = await this.deps.users.findByEmail(normaliseEmail(email));
    const valid = await verifyPassword(password, user?.passwordHash ?? (await decoyPasswordHash()));
    if (!user || !valid) throw new AppError(401, INVALID_LOGIN);

    const now = this.deps.clock();
    await this.deps.sessions.deleteExpired(user.id, now);
    const { secrets, issue } = this.newSecrets(now);
    const session: Session = { id: newId('ses'), userId: user.id, createdAt: now, ...secrets };
    await this.deps.sessions.create(session);
    return issue(user.id);
  }

  /** Swaps both halves: the old bearer token and the old cookie stop working. */
  async refresh(refreshToken: string): Promise<IssuedSession> {
    const now = this.deps.clock();
    const { secrets, issue } = this.newSecrets(now);
    const session = await this.deps.sessions.rotate(tokenDigest(refreshToken), now, secrets);
    if (!session) throw new AppError(401, INVALID_REFRESH);
    return issue(session.userId);
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
