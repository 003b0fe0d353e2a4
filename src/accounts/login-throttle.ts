import ipaddr from 'ipaddr.js';
import type { Clock } from '../clock';
import { AppError } from '../http/errors';
import { KeyedQueue } from '../keyed-queue';
import type { LoginFailuresRepository } from './login-failures.repository';
import { tokenDigest } from './tokens';

/** After `free` failures in a row, each further one holds the key back twice as long. */
export interface ThrottleRule {
  free: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

/**
 * One account name may fail 5 times, one source 20 (several people may share an address behind
 * NAT); a streak is forgotten after an hour without failures. Account names are keyed whether or
 * not the account exists, so the answers never tell which emails are registered.
 */
export const LOGIN_THROTTLE = {
  account: { free: 5, firstDelayMs: 1_000, maxDelayMs: 15 * 60_000 },
  source: { free: 20, firstDelayMs: 1_000, maxDelayMs: 15 * 60_000 },
  forgetAfterMs: 60 * 60_000,
} as const;

export function throttleDelayMs(failures: number, rule: ThrottleRule): number {
  if (failures < rule.free) return 0;
  return Math.min(rule.firstDelayMs * 2 ** (failures - rule.free), rule.maxDelayMs);
}

/** IPv6 clients usually hold a whole /64, so one is one source; IPv4-mapped forms count as IPv4. */
export function sourceKey(address: string | undefined): string {
  if (!address || !ipaddr.isValid(address)) return 'source:unknown';
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return `source:${parsed.toString()}`;
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `source:${prefix.join(':')}::/64`;
}

export function accountKey(normalisedEmail: string): string {
  return `account:${tokenDigest(normalisedEmail)}`;
}

/** Sign-in throttling per account name and per source address, shared by every API replica. */
export class LoginThrottle {
  private readonly inFlight = new KeyedQueue();

  constructor(
    private readonly failures: LoginFailuresRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * Runs a sign-in attempt once no other attempt of the same source, nor of the same email, is
   * under way in this process. Each attempt then sees the failures of the ones before it (twenty
   * parallel guesses cannot all pass the check before the first failure is counted), and a flood
   * of one account or from one source holds at most one hashing slot, leaving the rest to others.
   * Sources are taken before emails, always in that order, so two attempts never wait on each
   * other.
   */
  attempt<T>(normalisedEmail: string, source: string | undefined, task: () => Promise<T>) {
    return this.inFlight.run(sourceKey(source), () =>
      this.inFlight.run(accountKey(normalisedEmail), task),
    );
  }

  /** Refuses with 429 `login_throttled` (and `Retry-After`) while either key is held back. */
  async check(normalisedEmail: string, source: string | undefined): Promise<void> {
    const now = this.clock().getTime();
    const streaks = await Promise.all(
      [accountKey(normalisedEmail), sourceKey(source)].map((key) => this.failures.find(key)),
    );
    const until = Math.max(...streaks.map((s) => s?.blockedUntil?.getTime() ?? 0));
    if (until <= now) return;
    const seconds = Math.ceil((until - now) / 1000);
    throw new AppError(
      429,
      {
        error: 'login_throttled',
        message: `Too many failed sign-ins: try again in ${seconds} s`,
        retry_after_seconds: seconds,
      },
      { 'Retry-After': String(seconds) },
    );
  }

  async failed(normalisedEmail: string, source: string | undefined): Promise<void> {
    const now = this.clock();
    const forgetBefore = new Date(now.getTime() - LOGIN_THROTTLE.forgetAfterMs);
    const count = async (key: string, rule: ThrottleRule) => {
      const streak = await this.failures.addFailure(key, now, forgetBefore);
      const delay = throttleDelayMs(streak.failures, rule);
      if (delay > 0) await this.failures.blockUntil(key, new Date(now.getTime() + delay));
    };
    await Promise.all([
      count(accountKey(normalisedEmail), LOGIN_THROTTLE.account),
      count(sourceKey(source), LOGIN_THROTTLE.source),
    ]);
  }

  /** The account's streak ends; the source's does not (an attacker could sign in to their own). */
  async succeeded(normalisedEmail: string): Promise<void> {
    await this.failures.clear(accountKey(normalisedEmail));
  }
}
