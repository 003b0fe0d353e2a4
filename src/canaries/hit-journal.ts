import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, readdir, readFile, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import type { Logger } from '../logger';

/** A segment file: ours while we hold its lock (proper-lockfile, `<file>.lock`). */
interface Segment {
  path: string;
  openedAt: number;
  /** Entries written. */
  written: number;
  /** Entries written and not yet settled by the fast path. */
  unsettled: number;
  sealed: boolean;
  /** Some entry failed on the fast path: the file must be replayed before it goes. */
  failed: boolean;
  release(): Promise<void>;
}

interface Waiting {
  line: string;
  resolve(held: Held): void;
  reject(err: unknown): void;
}

/** A written entry: settle it once it is recorded (true) or could not be (false: replayed later). */
export interface Held {
  settle(recorded: boolean): void;
}

export interface JournalSettings {
  dir: string;
  /** A segment takes new entries this long, then is sealed and, once settled, deleted. */
  rotateMs: number;
  /** How often failed and orphaned segments are replayed. */
  replayMs: number;
  /** A segment lock not refreshed for this long belongs to a dead process (its segments are adopted). */
  staleMs: number;
}

export const DEFAULT_JOURNAL_TIMINGS = { rotateMs: 5_000, replayMs: 2_000, staleMs: 10_000 };

/**
 * Append-only, fsync'd JSON lines on local disk, written before a hit is answered. Appends of one
 * moment share one write and one fdatasync (group commit). Each process writes segments of its
 * own, each locked while the process lives, so processes may share the directory: a segment whose
 * lock went stale (its process died) is adopted by whichever process locks it first, replayed, and
 * deleted. Replay must be idempotent: an entry may have been recorded before the crash.
 */
export class HitJournal<T extends { id: string }> {
  private active: (Segment & { fd: FileHandle }) | null = null;
  private queue: Waiting[] = [];
  private writing: Promise<void> = Promise.resolve();
  private readonly toReplay = new Map<string, Segment>();
  private timer: NodeJS.Timeout | null = null;
  private replaying: Promise<void> = Promise.resolve();
  private readonly removals = new Set<Promise<void>>();

  constructor(
    private readonly settings: JournalSettings,
    private readonly replay: (entries: T[]) => Promise<void>,
    private readonly log: Logger,
  ) {
    mkdirSync(settings.dir, { recursive: true });
  }

  /** Resolves once the entry is on disk (fdatasync'd). */
  append(entry: T): Promise<Held> {
    return new Promise((resolve, reject) => {
      this.queue.push({ line: `${JSON.stringify(entry)}\n`, resolve, reject });
      if (this.queue.length === 1) void this.serially(() => this.writeQueued());
    });
  }

  /** Replays failed and orphaned segments now and every `replayMs` until `stop`. */
  start(): void {
    const tick = () => {
      this.timer = setTimeout(() => void this.replayOnce().finally(tick), this.settings.replayMs);
      this.timer.unref();
    };
    void this.replayOnce().finally(tick);
  }

  /** One pass: seals an old active segment, adopts orphans, replays whatever is due. */
  replayOnce(): Promise<void> {
    this.replaying = this.replaying.then(() => this.replayPass());
    return this.replaying;
  }

  /** Seals the active segment and waits for writes; unsettled segments stay for the next start. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.replaying;
    await this.serially(() => this.seal());
    await Promise.all(this.removals);
    await Promise.all([...this.toReplay.values()].map((s) => s.release()));
    this.toReplay.clear();
  }

  private serially(step: () => Promise<void>): Promise<void> {
    this.writing = this.writing.then(step, step);
    return this.writing;
  }

  /**
   * One group: all its bytes written and synced, or the whole group fails (each request is then
   * refused, never answered). A segment that saw a failed write is retired (closed, its valid
   * lines replayed once settled), so whatever part of the group reached the disk ends it and no
   * later line is glued to a torn one; the next group opens a fresh segment.
   */
  private async writeQueued(): Promise<void> {
    const batch = this.queue.splice(0);
    let segment: (Segment & { fd: FileHandle }) | null = null;
    try {
      if (this.active && Date.now() - this.active.openedAt > this.settings.rotateMs) {
        await this.seal();
      }
      segment = this.active ?? (this.active = await this.openSegment());
      await writeAll(segment.fd, Buffer.from(batch.map((w) => w.line).join('')));
      await segment.fd.datasync();
    } catch (err) {
      batch.forEach((w) => w.reject(err));
      if (segment) await this.retire(segment, err);
      return;
    }
    segment.written += batch.length;
    segment.unsettled += batch.length;
    const held = { settle: (recorded: boolean) => this.settle(segment, recorded) };
    batch.forEach((w) => w.resolve(held));
  }

  /** A segment whose write failed takes no more lines: sealed, and replayed once its lines settle. */
  private async retire(segment: Segment & { fd: FileHandle }, err: unknown): Promise<void> {
    this.log.error({ err, path: segment.path }, 'tripwire journal write failed; segment retired');
    segment.failed = true;
    await this.seal().catch((closing: unknown) =>
      this.log.warn({ err: closing, path: segment.path }, 'tripwire journal segment not closed'),
    );
  }

  private async openSegment(): Promise<Segment & { fd: FileHandle }> {
    const path = join(this.settings.dir, `${Date.now()}-${randomUUID()}.jsonl`);
    const fd = await open(path, 'a');
    try {
      const release = await this.lock(path);
      const fresh = {
        openedAt: Date.now(),
        written: 0,
        unsettled: 0,
        sealed: false,
        failed: false,
      };
      return { path, fd, ...fresh, release };
    } catch (err) {
      // Unlocked and empty: whichever process adopts it next removes it.
      await fd.close();
      throw err;
    }
  }

  private lock(path: string): Promise<() => Promise<void>> {
    return lockfile.lock(path, {
      realpath: false,
      stale: this.settings.staleMs,
      onCompromised: (err) =>
        // Another process may replay it too: harmless, replays are idempotent.
        this.log.warn({ err, path }, 'tripwire journal segment lock lost'),
    });
  }

  private async seal(): Promise<void> {
    const segment = this.active;
    if (!segment) return;
    this.active = null;
    try {
      await segment.fd.close();
    } finally {
      // Sealed only now: a last entry settled while the file closed must not finish it a second
      // time (its removal would then run twice).
      segment.sealed = true;
      this.finishIfSettled(segment);
    }
  }

  private settle(segment: Segment, recorded: boolean): void {
    segment.unsettled -= 1;
    if (!recorded) segment.failed = true;
    this.finishIfSettled(segment);
  }

  private finishIfSettled(segment: Segment): void {
    if (!segment.sealed || segment.unsettled > 0) return;
    if (segment.failed) return void this.toReplay.set(segment.path, segment);
    const removal = this.remove(segment);
    this.removals.add(removal);
    void removal.finally(() => this.removals.delete(removal));
  }

  private async remove(segment: Segment): Promise<void> {
    try {
      await unlink(segment.path);
      await segment.release();
    } catch (err) {
      this.log.warn({ err, path: segment.path }, 'tripwire journal segment not removed');
    }
  }

  private async replayPass(): Promise<void> {
    // An idle segment is sealed too, or what failed in it would wait for the next hit.
    if (this.active && this.active.written > 0 && this.isOld(this.active)) {
      await this.serially(() => this.seal());
    }
    await this.adoptOrphans();
    for (const segment of [...this.toReplay.values()]) {
      try {
        const { entries, unreadable } = parseLines<T>(await readFile(segment.path, 'utf8'));
        if (unreadable) {
          // A write that failed or was cut short by a crash: that hit was refused, never answered.
          this.log.warn({ path: segment.path, unreadable }, 'tripwire journal: torn line skipped');
        }
        await this.replay(entries);
        this.toReplay.delete(segment.path);
        await this.remove(segment);
        this.log.info({ path: segment.path, entries: entries.length }, 'tripwire journal replayed');
      } catch (err) {
        this.log.warn({ err, path: segment.path }, 'tripwire journal replay failed; will retry');
      }
    }
  }

  private isOld(segment: Segment): boolean {
    return Date.now() - segment.openedAt > this.settings.rotateMs;
  }

  /** Segments no live process holds: left by a process that died (or stopped with hits pending). */
  private async adoptOrphans(): Promise<void> {
    const names = (await readdir(this.settings.dir)).filter((n) => n.endsWith('.jsonl'));
    for (const name of names) {
      const path = join(this.settings.dir, name);
      if (this.toReplay.has(path) || path === this.active?.path) continue;
      try {
        const release = await this.lock(path);
        const orphan = { path, openedAt: 0, written: 0, unsettled: 0, sealed: true, failed: true };
        this.toReplay.set(path, { ...orphan, release });
      } catch {
        // Held by a live process (ours included: a sealed segment still settling), or just removed.
      }
    }
  }
}

/** Every byte of `data`: a short write (a disk filling up) continues, or throws its error. */
async function writeAll(fd: FileHandle, data: Buffer): Promise<void> {
  for (let offset = 0; offset < data.length;) {
    const { bytesWritten } = await fd.write(data, offset);
    if (bytesWritten === 0) throw Object.assign(new Error('no byte written'), { code: 'ENOSPC' });
    offset += bytesWritten;
  }
}

/** Complete lines only: a torn line was never acknowledged, so its hit was never answered. */
function parseLines<T>(text: string): { entries: T[]; unreadable: number } {
  const entries: T[] = [];
  let unreadable = 0;
  for (const line of text.split('\n')) {
    try {
      if (line) entries.push(JSON.parse(line) as T);
    } catch {
      unreadable++;
    }
  }
  return { entries, unreadable };
}
