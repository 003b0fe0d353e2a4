import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import pLimit from 'p-limit';
import { AppError } from '../http/errors';

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
  /** Hashes allowed to wait per running slot; beyond that a sign-in is refused at once with 503. */
  waitingPerSlot?: number;
}

/**
 * Every password hash in the process goes through here, behind a small concurrency limit, so a
 * flood of sign-ins cannot take every core (or libuv's whole thread pool, which DNS and file reads
 * share) from the other requests.
 */
export class PasswordHasher {
  private readonly slots: pLimit.Limit;
  /** Running plus waiting hashes. */
  private readonly capacity: number;
  private decoy: Promise<string> | undefined;

  constructor(options: HasherOptions) {
    this.slots = pLimit(options.concurrency);
    this.capacity = options.concurrency * (1 + (options.waitingPerSlot ?? 8));
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
   * held back meanwhile cost no hash.
   */
  async verify(
    password: string,
    stored: string,
    whenItsTurn?: () => Promise<void>,
  ): Promise<Verification> {
    const parsed = parseStored(stored);
    if (!parsed) return { valid: false, outdated: false };
    const options = { N: 2 ** parsed.costLog2, r: parsed.blockSize, p: parsed.parallelism };
    const actual = await this.derive(password, parsed.salt, options, whenItsTurn);
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
    whenItsTurn?: () => Promise<void>,
  ): Promise<Buffer> {
    // p-limit starts queued work a microtask later, so count running and queued together.
    if (this.slots.activeCount + this.slots.pendingCount >= this.capacity) {
      throw new AppError(
        503,
        {
          error: 'login_busy',
          message: 'Too many sign-ins are being checked right now: try again in a second',
          retry_after_seconds: 1,
        },
        { 'Retry-After': '1' },
      );
    }
    return this.slots(async () => {
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
