import type { Logger } from '../logger';
import type { RecordedHit, ThreatsRepository } from './threats.repository';

export interface HitFeedSettings {
  /** How often the process looks for hits written since its last look. */
  pollMs: number;
  /**
   * How far back each look reaches before the newest hit already seen: a hit written by another
   * API process (whose clock may differ a little) or whose write took a while still shows up.
   */
  graceMs: number;
  /** How long hits stay in memory for a client that reconnects with `Last-Event-ID`. */
  keepMs: number;
}

export const DEFAULT_HIT_FEED_SETTINGS: HitFeedSettings = {
  pollMs: 1_000,
  graceMs: 5_000,
  keepMs: 5 * 60_000,
};

/** Hits read per page of a look. */
const PAGE = 500;

type Listener = (hit: RecordedHit) => void;

/** `<recordedAt ms>-<hit id>`: what a client sends back as `Last-Event-ID`. */
export const eventIdOf = (hit: RecordedHit) => `${hit.recordedAt.getTime()}-${hit.id}`;

/**
 * New hits, as any API process records them, for the clients streaming from this one. One poll
 * per process (not per client), by the hits' `recordedAt` index, and only while some client
 * listens: the embedded database has no change streams, and every process sees every hit this
 * way whichever process wrote it.
 */
export class HitFeed {
  private readonly listeners = new Map<string, Set<Listener>>();
  /** Hits seen in the last `keepMs`, in the order they were found; by id for the dedupe. */
  private recent = new Map<string, RecordedHit>();
  /** Every hit written since this instant is in `recent` (while polling). */
  private coveredSince = 0;
  private newest = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  private readonly closers = new Set<() => void>();

  constructor(
    private readonly threats: Pick<ThreatsRepository, 'recordedSince'>,
    private readonly log: Logger,
    private readonly settings: HitFeedSettings = DEFAULT_HIT_FEED_SETTINGS,
  ) {}

  /**
   * Calls `listener` with each new hit of the account until the returned function is called;
   * `onClose` runs if the feed shuts down first (the process is stopping).
   */
  subscribe(accountId: string, listener: Listener, onClose: () => void): () => void {
    if (this.closed) {
      queueMicrotask(onClose);
      return () => {};
    }
    if (!this.listeners.size) this.start();
    const own = this.listeners.get(accountId) ?? new Set();
    own.add(listener);
    this.listeners.set(accountId, own);
    this.closers.add(onClose);
    return () => {
      own.delete(listener);
      if (!own.size) this.listeners.delete(accountId);
      this.closers.delete(onClose);
      if (!this.listeners.size) this.stop();
    };
  }

  /**
   * The account's hits since the one a client saw last (by its event id), for a reconnect: the
   * last `graceMs` before it come again (a client may see a hit twice, never miss one). Null
   * when that is older than what this process holds: the client should re-read its lists.
   */
  since(accountId: string, lastEventId: string): RecordedHit[] | null {
    const match = /^(\d{1,15})-(.+)$/.exec(lastEventId);
    if (!match) return null;
    const from = Number(match[1]) - this.settings.graceMs;
    if (!this.coveredSince || from < this.coveredSince) return null;
    return [...this.recent.values()].filter(
      (hit) =>
        hit.accountId === accountId && hit.recordedAt.getTime() >= from && hit.id !== match[2],
    );
  }

  /** Ends every stream (the process is stopping); later subscribers are closed at once. */
  close(): void {
    this.closed = true;
    for (const onClose of [...this.closers]) onClose();
    this.stop();
  }

  private start(): void {
    const now = Date.now();
    this.recent.clear();
    this.newest = now;
    // The first look reaches `graceMs` back, so from then on nothing written since is missed.
    this.coveredSince = now - this.settings.graceMs;
    this.schedule(0);
  }

  private stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.coveredSince = 0;
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => void this.poll(), ms);
  }

  private async poll(): Promise<void> {
    try {
      const fresh: RecordedHit[] = [];
      let from = this.newest - this.settings.graceMs;
      // Page by page while pages come full (a burst), each from the last one's newest write.
      for (;;) {
        const hits = await this.threats.recordedSince(new Date(from), PAGE);
        for (const hit of hits) {
          if (this.recent.has(hit.id)) continue;
          this.recent.set(hit.id, hit);
          this.newest = Math.max(this.newest, hit.recordedAt.getTime());
          fresh.push(hit);
        }
        const last = hits.at(-1)?.recordedAt.getTime();
        if (hits.length < PAGE || last === undefined || last <= from) break;
        from = last;
      }
      this.forget();
      // Every stream may have ended while the database answered.
      if (!this.timer) return;
      for (const hit of fresh) {
        for (const listener of this.listeners.get(hit.accountId) ?? []) listener(hit);
      }
    } catch (err) {
      this.log.warn({ err }, 'live hit feed: the poll failed; trying again');
    }
    if (this.timer) this.schedule(this.settings.pollMs);
  }

  /** Hits older than `keepMs` leave memory (and the grace window) for good. */
  private forget(): void {
    const cutoff = Date.now() - this.settings.keepMs;
    for (const [id, hit] of this.recent) {
      if (hit.recordedAt.getTime() >= cutoff) break;
      this.recent.delete(id);
    }
    this.coveredSince = Math.max(this.coveredSince, cutoff);
  }
}
