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
export const MAX_SIGNALS_IN_FLIGHT = 32;

/** How long this process remembers an alert it need not tell any more. */
const FORGET_AFTER_MS = 5 * 60_000;

interface Due {
  input: Signal;
  hits: number;
  /** The event was written by this process: its pending mark is cleared once the alert starts. */
  opened: boolean;
  /** When the call may go (epoch ms): at once for an alert not told yet, later for more hits. */
  notBefore: number;
}

/** What this process knows of an alert it told. */
interface Told {
  /** When it may be told of more hits (epoch ms). */
  again: number;
  /** After this its storm check is over (or the alert has ended): more hits change nothing. */
  until: number;
}

/**
 * Starts or signals threat alerts off the recorder's path. One call per event at a time, and at
 * most `MAX_SIGNALS_IN_FLIGHT` in all, alerts not yet told first: hits of an event that arrive
 * while its call is out or waiting are added up into its next call. Each call's deadline runs
 * from when it is sent. A call that fails leaves the event's pending mark: the start reconciler
 * starts the alert once Temporal answers.
 *
 * Each call costs the worker and Temporal a workflow task, and an alert needs few: its storm check
 * only asks whether some hit came in each quiet period, and its follow-up counts the event's
 * recorded hits. So an alert this process told is told of more hits at most every half of its
 * quiet period, and not at all once its storm check is over (`gather.maxMs` after the first call
 * returned, which is after the alert started) or the alert has ended.
 */
export class ThreatAlertSignals {
  private readonly due = new Map<string, Due>();
  /** Events with a call out. */
  private readonly out = new Set<string>();
  private readonly told = new Map<string, Told>();
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
    const told = this.told.get(id);
    if (told && told.until <= Date.now()) return;
    const due = this.due.get(id);
    if (due) {
      due.hits += hits;
      due.opened ||= opened;
    } else {
      this.due.set(id, { input, hits, opened, notBefore: told?.again ?? 0 });
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
    let running: boolean;
    try {
      running = await temporal.client.withDeadline(sentAt + START_DEADLINE_MS, () =>
        signalThreatAlert(temporal, input, hits),
      );
    } catch (err) {
      log.warn({ err, threatEventId: id }, 'threat alert not started yet');
      return;
    }
    const now = Date.now();
    this.forgetOld(now);
    const told = this.told.get(id);
    const again = sentAt + input.gather.quietMs / 2;
    const until = running ? (told?.until ?? now + input.gather.maxMs) : now;
    this.told.set(id, { again, until });
    const later = this.due.get(id);
    if (later) later.notBefore = Math.max(later.notBefore, again);
    if (opened) this.clearMark(id);
  }

  /**
   * Alerts over for a while need no entry: hits that still come for one (its storm window outlasts
   * its storm check) cost one more call, answered that it has ended.
   */
  private forgetOld(now: number): void {
    for (const [id, { again, until }] of this.told) {
      if (until + FORGET_AFTER_MS <= now && again <= now) this.told.delete(id);
    }
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
