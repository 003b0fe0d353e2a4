import type { EvidenceInput } from '../evidence.store';
import type { Logger } from '../../logger';
import { toEvidence, type AuditEvent, type AuditTrail } from './audit-trail';

const FLUSH_EVERY_MS = 20;
const RETRY_AFTER_MS = 1_000;
/** Past this many unwritten entries (a long database outage) the oldest are dropped, loudly. */
const MAX_BUFFERED = 50_000;

interface Pending {
  accountId: string;
  input: EvidenceInput;
}

/**
 * Buffers high-volume audit entries (one per API-key request) and seals them in batches shortly
 * after the response has gone out: one chained append per account and batch rather than one per
 * request. A failed batch is kept and retried (log ids are fixed, so nothing is written twice);
 * `close()` writes what is left on shutdown.
 */
export class AuditTrailWriter {
  private buffer: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly trail: AuditTrail,
    private readonly log: Logger,
  ) {}

  record(event: AuditEvent): void {
    this.buffer.push({ accountId: event.accountId, input: toEvidence(event) });
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
    const batch = this.buffer;
    this.buffer = [];
    this.flushing = this.write(batch);
    try {
      await this.flushing;
    } finally {
      this.flushing = undefined;
    }
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private async write(batch: Pending[]): Promise<void> {
    const byAccount = new Map<string, Pending[]>();
    // In place: copying the group on every entry was quadratic, and a backlog of 20,000 entries
    // after one slow write held the event loop for 8 s (the metered benchmark's stalled rounds).
    for (const p of batch) {
      const group = byAccount.get(p.accountId);
      if (group) group.push(p);
      else byAccount.set(p.accountId, [p]);
    }
    const failed: Pending[] = [];
    let firstError: unknown;
    await Promise.all(
      [...byAccount].map(async ([accountId, entries]) => {
        try {
          await this.trail.appendBatch(
            accountId,
            entries.map((e) => e.input),
          );
        } catch (err) {
          failed.push(...entries);
          firstError ??= err;
        }
      }),
    );
    if (failed.length) {
      this.buffer.unshift(...failed);
      throw firstError;
    }
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
