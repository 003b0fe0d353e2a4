import { setTimeout as sleep } from 'node:timers/promises';
import ipaddr from 'ipaddr.js';
import type { Clock } from '../clock';
import { DomainError } from '../errors';
import { KeyedQueue } from '../keyed-queue';
import type { KnownDevicesRepository } from './known-devices.repository';
import type { LoginFailuresRepository } from './login-failures.repository';
import { newSecretToken, tokenDigest } from './tokens';

/** After `free` failures in a row, each further one holds the key back twice as long. */
export interface ThrottleRule {
  free: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

/**
 * One account name may fail 5 times, one source 20 (several people may share an address behind
 * NAT); a streak is forgotten after an hour without failures. Account names are keyed whether or
 * not the account exists, so the answers never tell which emails are registered. A known device
 * (see `LoginThrottle`) has a streak of its own, with the account's rule.
 */
export const LOGIN_THROTTLE = {
  account: { free: 5, firstDelayMs: 1_000, maxDelayMs: 15 * 60_000 },
  source: { free: 20, firstDelayMs: 1_000, maxDelayMs: 15 * 60_000 },
  forgetAfterMs: 60 * 60_000,
  knownDeviceTtlMs: 90 * 24 * 60 * 60_000,
  /**
   * A refused sign-in (429) is answered this much later: guessing tools wait for each answer, so
   * a flood of them then sends a request per connection every 2 s instead of as fast as the
   * refusals come back (which would take the CPU the throttle and the hashing limit saved).
   */
  refusalPauseMs: 2_000,
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

/** One sign-in attempt as the throttle sees it. */
export interface SignInAttempt {
  normalisedEmail: string;
  source: string | undefined;
  /** `device:<digest>` when it carries the device cookie of this very account name. */
  device?: string;
}

/** A device cookie to set: the browser that just signed in is known from now on. */
export interface NewDevice {
  token: string;
  expiresAt: Date;
}

function throttled(seconds: number): DomainError {
  return new DomainError(
    'rate_limited',
    {
      error: 'login_throttled',
      message: `Too many failed sign-ins: try again in ${seconds} s`,
      retry_after_seconds: seconds,
    },
    seconds,
  );
}

/**
 * Failed sign-ins from devices not known to their account, across every source and account name,
 * in this process (the hashing they cost is this process's too). At most `perMinute` in any
 * minute: beyond that such attempts are refused before any database read or hash, which is what
 * holds a flood from many addresses (a botnet) that no per-source streak catches.
 */
export class FailureBudget {
  /** When each attempt counted in the last minute was admitted, oldest first. */
  private readonly spent: number[] = [];

  constructor(
    private readonly perMinute: number,
    private readonly clock: Clock,
  ) {}

  /** Counts one attempt or throws 429; call the returned function if it turns out not to fail. */
  take(): () => void {
    const now = this.clock().getTime();
    while (this.spent.length > 0 && this.spent[0]! <= now - 60_000) this.spent.shift();
    if (this.spent.length >= this.perMinute) {
      throw throttled(Math.max(1, Math.ceil((this.spent[0]! + 60_000 - now) / 1000)));
    }
    this.spent.push(now);
    let given = false;
    return () => {
      const at = this.spent.indexOf(now);
      if (!given && at >= 0) this.spent.splice(at, 1);
      given = true;
    };
  }
}

/**
 * Sign-in throttling per account name, per source address and per known device, shared by every
 * API replica, and a failure budget per process for devices not known.
 *
 * A known device is a browser that signed in to the account before: it holds a random device
 * cookie (OWASP's "device cookies"), stored here as a digest bound to that account name. Its
 * attempts are throttled by their own streak instead of the account's and the source's, are not
 * counted against the failure budget, and hash ahead of the others: an attacker who floods an
 * account, an address or the whole service cannot lock its owner out of their usual browser.
 */
export class LoginThrottle {
  private readonly inFlight = new KeyedQueue();

  constructor(
    private readonly failures: LoginFailuresRepository,
    private readonly devices: KnownDevicesRepository,
    private readonly budget: FailureBudget,
    private readonly clock: Clock,
  ) {}

  /** The attempt's `device` key when `deviceToken` is a live device cookie of this account name. */
  async recognise(normalisedEmail: string, deviceToken: string | undefined) {
    if (!deviceToken) return undefined;
    const digest = tokenDigest(deviceToken);
    const account = await this.devices.accountOf(digest, this.clock());
    return account === accountKey(normalisedEmail) ? `device:${digest}` : undefined;
  }

  /** A new device cookie for a browser that just signed in to this account name. */
  async rememberDevice(normalisedEmail: string): Promise<NewDevice> {
    const token = newSecretToken();
    const expiresAt = new Date(this.clock().getTime() + LOGIN_THROTTLE.knownDeviceTtlMs);
    await this.devices.remember(tokenDigest(token), accountKey(normalisedEmail), expiresAt);
    return { token, expiresAt };
  }

  /**
   * Runs a sign-in attempt once no other attempt with the same keys is under way in this process
   * (a known device's; else the source's, then the email's, always in that order, so two attempts
   * never wait on each other). Each attempt then sees the failures of the ones before it (twenty
   * parallel guesses cannot all pass the check before the first failure is counted), and a flood
   * of one account or from one source holds at most one hashing slot, leaving the rest to others.
   * A refusal is answered after a pause, with the keys already let go.
   */
  async attempt<T>(who: SignInAttempt, task: () => Promise<T>): Promise<T> {
    const queued = keysOf(who).reduceRight<() => Promise<T>>(
      (inner, key) => () => this.inFlight.run(key, inner),
      task,
    );
    try {
      return await queued();
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'rate_limited')
        await sleep(LOGIN_THROTTLE.refusalPauseMs);
      throw err;
    }
  }

  /**
   * Takes one failure from the budget when the device is not known (refused with 429 when none
   * is left); call the returned function unless the attempt failed.
   */
  admit(who: SignInAttempt): () => void {
    return who.device ? () => undefined : this.budget.take();
  }

  /** Refuses with 429 `login_throttled` (and `Retry-After`) while any key of the attempt is held back. */
  async check(who: SignInAttempt): Promise<void> {
    const now = this.clock().getTime();
    const streaks = await Promise.all(keysOf(who).map((key) => this.failures.find(key)));
    const until = Math.max(...streaks.map((s) => s?.blockedUntil?.getTime() ?? 0));
    if (until > now) throw throttled(Math.ceil((until - now) / 1000));
  }

  async failed(who: SignInAttempt): Promise<void> {
    const now = this.clock();
    const forgetBefore = new Date(now.getTime() - LOGIN_THROTTLE.forgetAfterMs);
    const count = async (key: string) => {
      const rule = key.startsWith('source:') ? LOGIN_THROTTLE.source : LOGIN_THROTTLE.account;
      const streak = await this.failures.addFailure(key, now, forgetBefore);
      const delay = throttleDelayMs(streak.failures, rule);
      if (delay > 0) await this.failures.blockUntil(key, new Date(now.getTime() + delay));
    };
    await Promise.all(keysOf(who).map(count));
  }

  /**
   * The streak of the account (or of the known device) ends; the source's does not (an attacker
   * could sign in to their own account).
   */
  async succeeded(who: SignInAttempt): Promise<void> {
    await this.failures.clear(who.device ?? accountKey(who.normalisedEmail));
  }
}

function keysOf(who: SignInAttempt): string[] {
  return who.device ? [who.device] : [sourceKey(who.source), accountKey(who.normalisedEmail)];
}
