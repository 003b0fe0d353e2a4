import type { ThreatsRepository } from '../canaries/threats.repository';
import type { Logger } from '../logger';
import { START_DEADLINE_MS, type Temporal } from '../temporal/client';
import type { ThreatAlertInput } from '../../workflows/shared';
import { startThreatAlert } from './alert-workflows';

type Start = Omit<ThreatAlertInput, 'kind' | 'recoveryMs'>;

/**
 * Calls out to Temporal at once: a flood's storms wait their turn here, where the deadline has
 * not started, rather than on the connection, where it has.
 */
export const MAX_STARTS_IN_FLIGHT = 32;

interface Waiting {
  input: Start;
  /** The event was written by this process: its pending mark is cleared once the alert starts. */
  opened: boolean;
}

/**
 * Starts threat alerts off the recorder's path, in the order they were asked for, at most
 * `MAX_STARTS_IN_FLIGHT` at once; an event asked for again while it waits is started once. Each
 * call's deadline runs from when it is sent. A start that fails leaves the event's pending mark:
 * the start reconciler starts the alert once Temporal answers. A started alert reads its storm's
 * later hits from the event, so it is never told of them: one call per storm.
 */
export class ThreatAlertStarts {
  private readonly waiting = new Map<string, Waiting>();
  private out = 0;
  /** Events this process opened whose alert started: their pending marks, cleared in one write. */
  private marks: string[] = [];
  private clearing: Promise<void> | null = null;
  private wakeIdle: (() => void)[] = [];

  constructor(
    private readonly deps: { temporal: Temporal; threats: ThreatsRepository; log: Logger },
  ) {}

  start(input: Start, opened: boolean): void {
    const waiting = this.waiting.get(input.threatEventId);
    if (waiting) waiting.opened ||= opened;
    else this.waiting.set(input.threatEventId, { input, opened });
    this.pump();
  }

  /** Resolves once every start asked for so far has been sent (or has failed). */
  async idle(): Promise<void> {
    while (this.waiting.size || this.out || this.clearing) {
      await new Promise<void>((wake) => this.wakeIdle.push(wake));
    }
  }

  /** Sends the oldest waiting starts while fewer than the bound are out. */
  private pump(): void {
    for (const [id, waiting] of this.waiting) {
      if (this.out >= MAX_STARTS_IN_FLIGHT) break;
      this.waiting.delete(id);
      this.out++;
      void this.send(waiting).finally(() => {
        this.out--;
        this.pump();
      });
    }
    this.wake();
  }

  private wake(): void {
    for (const wake of this.wakeIdle.splice(0)) wake();
  }

  private async send({ input, opened }: Waiting): Promise<void> {
    const { temporal, log } = this.deps;
    try {
      await temporal.client.withDeadline(Date.now() + START_DEADLINE_MS, () =>
        startThreatAlert(temporal, input),
      );
    } catch (err) {
      log.warn({ err, threatEventId: input.threatEventId }, 'threat alert not started yet');
      return;
    }
    if (opened) this.clearMark(input.threatEventId);
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
        // The marks stay: the reconciler starts those alerts again, which starts nothing twice.
        this.deps.log.warn({ err }, 'threat alerts started, pending marks not cleared');
      }
    }
  }
}
