import type { Logger } from '../logger';
import type { LiveItem, ThreatsRepository } from './threats.repository';

export interface LiveFeedSettings {
  /** How often the process looks for what was written since its last look. */
  pollMs: number;
  /**
   * How far back each look reaches before the newest item already seen: an item written by
   * another API process (whose clock may differ a little) or whose write took a while still shows.
   */
  graceMs: number;
  /** How long items stay in memory for a client that reconnects with `Last-Event-ID`. */
  keepMs: number;
}

export const DEFAULT_LIVE_FEED_SETTINGS: LiveFeedSettings = {
  pollMs: 1_000,
  graceMs: 5_000,
  keepMs: 5 * 60_000,
};

/** Items read per page of a look. */
const PAGE = 500;

type Listener = (item: LiveItem) => void;
/** One kind of item, read by the time it was written. */
type Source = (since: Date, limit: number) => Promise<LiveItem[]>;

/** `<recordedAt ms>-<key>`: what a client sends back as `Last-Event-ID`. */
export const eventIdOf = (item: LiveItem) => `${item.recordedAt.getTime()}-${item.key}`;

/**
 * New hits and prepared alerts, as any API process writes them, for the clients streaming from
 * this one. One poll per process (not per client), by indexes on the write times, and only while
 * some client listens: the embedded database has no change streams, and polling the shared
 * database lets every process see every write, whichever process made it.
 */
export class LiveFeed {
  private readonly sources: { read: Source; newest: number }[];
  private readonly listeners = new Map<string, Set<Listener>>();
  /** Items seen in the last `keepMs`, in the order they were found, by key (the dedupe). */
  private readonly recent = new Map<string, LiveItem>();
  /** Every item written since this instant is in `recent` (0 while not polling). */
  private coveredSince = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  private readonly closers = new Set<() => void>();

  constructor(
    threats: Pick<ThreatsRepository, 'hitsRecordedSince' | 'alertsRecordedSince'>,
    private readonly log: Logger,
    private readonly settings: LiveFeedSettings = DEFAULT_LIVE_FEED_SETTINGS,
  ) {
    const reads: Source[] = [
      (since, limit) => threats.hitsRecordedSince(since, limit),
      (since, limit) => threats.alertsRecordedSince(since, limit),
    ];
    this.sources = reads.map((read) => ({ read, newest: 0 }));
  }

  /**
   * Calls `listener` with each new item of the account until the returned function is called;
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
   * The account's items since the one a client saw last (by its event id), for a reconnect: the
   * last `graceMs` before it come again (a client may see an item twice, never miss one). Null
   * when that is older than what this process holds: the client should re-read its lists.
   */
  since(accountId: string, lastEventId: string): LiveItem[] | null {
    const match = /^(\d{1,15})-(.+)$/.exec(lastEventId);
    if (!match) return null;
    const from = Number(match[1]) - this.settings.graceMs;
    if (!this.coveredSince || from < this.coveredSince) return null;
    return [...this.recent.values()].filter(
      (item) =>
        item.accountId === accountId && item.recordedAt.getTime() >= from && item.key !== match[2],
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
    for (const source of this.sources) source.newest = now;
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
      const fresh = (await Promise.all(this.sources.map((s) => this.look(s)))).flat();
      this.forget();
      // Every stream may have ended while the database answered.
      if (!this.timer) return;
      for (const item of fresh) {
        for (const listener of this.listeners.get(item.accountId) ?? []) listener(item);
      }
    } catch (err) {
      this.log.warn({ err }, 'live feed: the poll failed; trying again');
    }
    if (this.timer) this.schedule(this.settings.pollMs);
  }

  /** One source's items not seen yet: page by page while pages come full (a burst). */
  private async look(source: { read: Source; newest: number }): Promise<LiveItem[]> {
    const fresh: LiveItem[] = [];
    let from = source.newest - this.settings.graceMs;
    for (;;) {
      const items = await source.read(new Date(from), PAGE);
      for (const item of items) {
        if (this.recent.has(item.key)) continue;
        this.recent.set(item.key, item);
        source.newest = Math.max(source.newest, item.recordedAt.getTime());
        fresh.push(item);
      }
      const last = items.at(-1)?.recordedAt.getTime();
      if (items.length < PAGE || last === undefined || last <= from) return fresh;
      from = last;
    }
  }

  /** Items older than `keepMs` leave memory (and the reach of a resume) for good. */
  private forget(): void {
    const cutoff = Date.now() - this.settings.keepMs;
    for (const [key, item] of this.recent) {
      if (item.recordedAt.getTime() >= cutoff) break;
      this.recent.delete(key);
    }
    this.coveredSince = Math.max(this.coveredSince, cutoff);
  }
}
