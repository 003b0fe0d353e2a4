import type { ThreatsRepository } from '../canaries/threats.repository';
import type { Logger } from '../logger';
import { START_DEADLINE_MS, type Temporal } from '../temporal/client';
import type { ThreatAlertInput } from '../../workflows/shared';
import { signalThreatAlert } from './alert-workflows';

type Signal = Omit<ThreatAlertInput, 'kind' | 'recoveryMs'>;

/**
 * Calls out to Temporal at once: a flood's storms wait their turn here, where the deadline has
 * not started, rather than on the connection, where it has.
 */
export const MAX_SIGNALS_IN_FLIGHT = 8;

interface Due {
  input: Signal;
  hits: number;
  /** The event was written by this process: its pending mark is cleared once the alert starts. */
  opened: boolean;
  /** When the call may go (epoch ms): at once for an alert not told yet, later for more hits. */
  notBefore: number;
}

/**
 * Starts or signals threat alerts off the recorder's path. One call per event at a time, and at
 * most `MAX_SIGNALS_IN_FLIGHT` in all, alerts not yet told first: hits of an event that arrive
 * while its call is out or waiting are added up into its next call. An alert this process has
 * told is told of more hits at most every half of its quiet period: its storm check only asks
 * whether some hit came in each quiet period, and its follow-up counts the event's recorded hits,
 * so more calls would only cost the worker and Temporal a workflow task each. Each call's
 * deadline runs from when it is sent. A call that fails leaves the event's pending mark: the
 * start reconciler starts the alert once Temporal answers.
 */
export class ThreatAlertSignals {
  private readonly due = new Map<string, Due>();
  /** Events with a call out. */
  private readonly out = new Set<string>();
  /** Events told by this process, and when they may be told again (epoch ms). */
  private readonly told = new Map<string, number>();
  /** Events this process opened whose alert started: their pending marks, cleared in one write. */
  private marks: string[] = [];
  private clearing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** `idle` callers: while any waits, nothing waits for its spacing. */
  private draining = 0;
  private wakeIdle: (() => void)[] = [];

  constructor(
    private readonly deps: { temporal: Temporal; threats: ThreatsRepository; log: Logger },
  ) {}

  signal(input: Signal, hits: number, opened: boolean): void {
    const id = input.threatEventId;
    const due = this.due.get(id);
    if (due) {
      due.hits += hits;
      due.opened ||= opened;
    } else {
      this.due.set(id, { input, hits, opened, notBefore: this.told.get(id) ?? 0 });
    }
    this.pump();
  }

  /** Resolves once every signal asked for so far has been sent (or has failed), without waiting. */
  async idle(): Promise<void> {
    this.draining++;
    try {
      this.pump();
      while (this.due.size || this.out.size || this.clearing) {
        await new Promise<void>((wake) => this.wakeIdle.push(wake));
      }
    } finally {
      this.draining--;
    }
  }

  /** Sends what may go now, oldest due first; wakes itself for what must wait. */
  private pump(): void {
    const now = Date.now();
    const waiting = [...this.due].filter(([id]) => !this.out.has(id));
    waiting.sort(([, a], [, b]) => a.notBefore - b.notBefore);
    let next = Number.POSITIVE_INFINITY;
    for (const [id, due] of waiting) {
      if (due.notBefore > now && !this.draining) {
        next = Math.min(next, due.notBefore);
        continue;
      }
      if (this.out.size >= MAX_SIGNALS_IN_FLIGHT) break;
      this.due.delete(id);
      this.out.add(id);
      void this.send(due).finally(() => {
        this.out.delete(id);
        this.pump();
      });
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (Number.isFinite(next)) {
      this.timer = setTimeout(() => this.pump(), next - now);
      this.timer.unref();
    }
    this.wake();
  }

  private wake(): void {
    for (const wake of this.wakeIdle.splice(0)) wake();
  }

  private async send({ input, hits, opened }: Due): Promise<void> {
    const { temporal, log } = this.deps;
    const id = input.threatEventId;
    const sentAt = Date.now();
    try {
      await temporal.client.withDeadline(sentAt + START_DEADLINE_MS, () =>
        signalThreatAlert(temporal, input, hits),
      );
    } catch (err) {
      log.warn({ err, threatEventId: id }, 'threat alert not started yet');
      return;
    }
    this.forgetOld(sentAt);
    const again = sentAt + input.gather.quietMs / 2;
    this.told.set(id, again);
    const later = this.due.get(id);
    if (later) later.notBefore = Math.max(later.notBefore, again);
    if (opened) this.clearMark(id);
  }

  /** Alerts told longer ago than their spacing need no entry: their next call goes at once. */
  private forgetOld(now: number): void {
    for (const [id, again] of this.told) if (again <= now) this.told.delete(id);
  }

  private clearMark(threatEventId: string): void {
    this.marks.push(threatEventId);
    this.clearing ??= this.clearMarks().finally(() => {
      this.clearing = null;
      this.wake();
    });
  }

  private async clearMarks(): Promise<void> {
    while (this.marks.length) {
      const ids = this.marks.splice(0);
      try {
        await this.deps.threats.alertsStarted(ids);
      } catch (err) {
        // The marks stay: the reconciler signals those alerts again, with no hits to add.
        this.deps.log.warn({ err }, 'threat alerts started, pending marks not cleared');
      }
    }
  }
}
