import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { DomainError } from '../errors';

/**
 * scrypt at OWASP's Password Storage Cheat Sheet minimum (N = 2^17, r = 8, p = 1): 128 MiB and a
 * few hundred milliseconds per hash. Stored hashes name their parameters, so older ones (N = 2^15)
 * still verify and are replaced at the owner's next successful sign-in.
 */
export const CURRENT_PARAMETERS = { costLog2: 17, blockSize: 8, parallelism: 1 } as const;
const KEY_LENGTH = 32;
/** 128 · N · r bytes for the parameters above, with room for OpenSSL's own bookkeeping. */
const MAX_MEMORY = 256 * 1024 * 1024;

export interface Verification {
  valid: boolean;
  /** Hashed with parameters below CURRENT_PARAMETERS: re-hash it now that the password is known. */
  outdated: boolean;
}

export interface HasherOptions {
  /** Hashes computed at once (each takes a core and 128 MiB); the rest wait their turn. */
  concurrency: number;
  /**
   * Hashes allowed to wait per running slot (and in the known devices' line, as many as for one
   * slot); beyond that a sign-in is refused at once with 503.
   */
  waitingPerSlot?: number;
}

/** `first`: a sign-in from a known device, which has a slot of its own and goes ahead of the rest. */
export type HashPriority = 'first' | 'normal';

/**
 * A counting semaphore with two waiting lines: `normal` work may use `size` slots, `first` work
 * one more, reserved for it. While `first` work runs or waits, no `normal` work starts, so a
 * known device's hash shares the cores with at most the hashes already running. p-limit has a
 * single FIFO line, and p-queue's priorities need ES modules; this is all the hasher needs.
 */
class HashingSlots {
  private readonly running: Record<HashPriority, number> = { first: 0, normal: 0 };
  private readonly waiting: Record<HashPriority, (() => void)[]> = { first: [], normal: [] };

  constructor(
    private readonly size: number,
    private readonly waitingPerSlot: number,
  ) {}

  /** Whether new work would have to wait in a line that is already full. */
  full(priority: HashPriority): boolean {
    if (this.canStart(priority)) return false;
    return priority === 'first'
      ? this.waiting.first.length >= this.waitingPerSlot
      : this.waiting.normal.length >= this.size * this.waitingPerSlot;
  }

  async run<T>(priority: HashPriority, task: () => Promise<T>): Promise<T> {
    if (this.canStart(priority)) this.running[priority]++;
    // else start() takes the slot for us.
    else await new Promise<void>((resolve) => this.waiting[priority].push(resolve));
    try {
      return await task();
    } finally {
      this.running[priority]--;
      this.startWaiting();
    }
  }

  private canStart(priority: HashPriority): boolean {
    const running = this.running.first + this.running.normal;
    if (priority === 'first') return running < this.size + 1;
    return running < this.size && this.running.first + this.waiting.first.length === 0;
  }

  private startWaiting(): void {
    for (;;) {
      const line = (['first', 'normal'] as const).find(
        (p) => this.waiting[p].length > 0 && this.canStart(p),
      );
      if (!line) return;
      const next = this.waiting[line].shift()!;
      this.running[line]++;
      next();
    }
  }
}

/**
 * Every password hash in the process goes through here, behind a small concurrency limit, so a
 * flood of sign-ins cannot take every core (or libuv's whole thread pool, which DNS and file reads
 * share) from the other requests.
 */
export class PasswordHasher {
  private readonly slots: HashingSlots;
  private decoy: Promise<string> | undefined;

  constructor(options: HasherOptions) {
    this.slots = new HashingSlots(options.concurrency, options.waitingPerSlot ?? 8);
  }

  /** Self-describing `scrypt$<logN>$<r>$<p>$<salt>$<key>` so parameters can be raised later. */
  async hash(password: string): Promise<string> {
    const { costLog2, blockSize, parallelism } = CURRENT_PARAMETERS;
    const salt = randomBytes(16);
    const key = await this.derive(password, salt, {
      N: 2 ** costLog2,
      r: blockSize,
      p: parallelism,
    });
    return [
      'scrypt',
      costLog2,
      blockSize,
      parallelism,
      salt.toString('base64'),
      key.toString('base64'),
    ].join('$');
  }

  /**
   * `whenItsTurn` runs once a slot is free, just before hashing, and may throw to give the slot
   * up: a sign-in that waited behind a flood is checked against the throttle again, so attempts
   * held back meanwhile cost no hash. `first` (a known device) has a slot of its own beyond the
   * others and goes ahead of every waiting `normal` hash, so a flood of other sign-ins does not
   * hold it up.
   */
  async verify(
    password: string,
    stored: string,
    turn: { whenItsTurn?: () => Promise<void>; priority?: HashPriority } = {},
  ): Promise<Verification> {
    const parsed = parseStored(stored);
    if (!parsed) return { valid: false, outdated: false };
    const options = { N: 2 ** parsed.costLog2, r: parsed.blockSize, p: parsed.parallelism };
    const actual = await this.derive(password, parsed.salt, options, turn);
    const valid = actual.length === parsed.key.length && timingSafeEqual(actual, parsed.key);
    return { valid, outdated: isOutdated(parsed) };
  }

  /** A hash to verify against when the account does not exist, so both cases take the same time. */
  decoyHash(): Promise<string> {
    this.decoy ??= this.hash(randomBytes(16).toString('hex'));
    return this.decoy;
  }

  private derive(
    password: string,
    salt: Buffer,
    options: ScryptOptions,
    {
      whenItsTurn,
      priority = 'normal',
    }: { whenItsTurn?: () => Promise<void>; priority?: HashPriority } = {},
  ): Promise<Buffer> {
    if (this.slots.full(priority)) {
      throw new DomainError(
        'unavailable',
        {
          error: 'login_busy',
          message: 'Too many sign-ins are being checked right now: try again in a second',
          retry_after_seconds: 1,
        },
        1,
      );
    }
    return this.slots.run(priority, async () => {
      await whenItsTurn?.();
      return new Promise<Buffer>((resolve, reject) => {
        scrypt(password, salt, KEY_LENGTH, { ...options, maxmem: MAX_MEMORY }, (err, key) =>
          err ? reject(err) : resolve(key),
        );
      });
    });
  }
}

interface StoredHash {
  costLog2: number;
  blockSize: number;
  parallelism: number;
  salt: Buffer;
  key: Buffer;
}

function parseStored(stored: string): StoredHash | undefined {
  const [scheme, logN, r, p, salt, key, ...rest] = stored.split('$');
  if (scheme !== 'scrypt' || !logN || !r || !p || !salt || !key || rest.length) return undefined;
  const [costLog2, blockSize, parallelism] = [Number(logN), Number(r), Number(p)];
  // Only parameters this service ever wrote: a tampered record cannot ask for a giant hash.
  if (!(costLog2 >= 14 && costLog2 <= 20 && blockSize >= 1 && blockSize <= 16)) return undefined;
  if (!(parallelism >= 1 && parallelism <= 4)) return undefined;
  return {
    costLog2,
    blockSize,
    parallelism,
    salt: Buffer.from(salt, 'base64'),
    key: Buffer.from(key, 'base64'),
  };
}

function isOutdated({ costLog2, blockSize, parallelism }: StoredHash): boolean {
  const current = CURRENT_PARAMETERS;
  return (
    costLog2 < current.costLog2 ||
    blockSize < current.blockSize ||
    parallelism < current.parallelism
  );
}
