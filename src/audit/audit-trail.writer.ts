import type { Logger } from '../logger';
import { withId, type AuditEntry, type AuditTrailRepository } from './audit-trail.repository';

const FLUSH_EVERY_MS = 20;
const RETRY_AFTER_MS = 1_000;
const MAX_BATCH = 500;
/** Past this many unwritten entries (a long database outage) the oldest are dropped, loudly. */
const MAX_BUFFERED = 50_000;

/**
 * Buffers high-volume audit entries (one per API-key request) and writes them in batches shortly
 * after the response has gone out, so the trail costs one database write per batch rather than
 * one per request. A failed batch is kept and retried; `close()` writes what is left on shutdown.
 */
export class AuditTrailWriter {
  private buffer: AuditEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly repository: AuditTrailRepository,
    private readonly log: Logger,
  ) {}

  record(entry: Omit<AuditEntry, 'id'>): void {
    this.buffer.push(withId(entry));
    if (this.buffer.length > MAX_BUFFERED) {
      const dropped = this.buffer.splice(0, this.buffer.length - MAX_BUFFERED);
      this.log.error(
        { dropped: dropped.length },
        'audit trail buffer full: oldest entries dropped',
      );
    }
    this.schedule(FLUSH_EVERY_MS);
  }

  /** Writes everything recorded so far. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (!this.buffer.length) return;
    const batch = this.buffer.splice(0, MAX_BATCH);
    this.flushing = this.repository.appendMany(batch).then(
      () => undefined,
      (err: unknown) => {
        this.buffer.unshift(...batch);
        throw err;
      },
    );
    try {
      await this.flushing;
    } finally {
      this.flushing = undefined;
    }
    if (this.buffer.length) await this.flush();
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private schedule(delayMs: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush().catch((err: unknown) => {
        this.log.error(
          { err, pending: this.buffer.length },
          'audit trail write failed: will retry',
        );
        this.schedule(RETRY_AFTER_MS);
      });
    }, delayMs);
    this.timer.unref();
  }
}
