import type { ThreatsRepository } from '../canaries/threats.repository';
import type { Logger } from '../logger';
import { START_DEADLINE_MS, type Temporal } from '../temporal/client';
import type { StormFollowUpInput, ThreatAlertInput } from '../../workflows/shared';
import { startStormFollowUp, startThreatAlert } from './alert-workflows';

type Start = Omit<ThreatAlertInput, 'kind' | 'recoveryMs'>;
type FollowUp = Omit<StormFollowUpInput, 'kind' | 'recoveryMs'>;

/**
 * Calls out to Temporal at once: a flood's storms wait their turn here, where the deadline has
 * not started, rather than on the connection, where it has.
 */
export const MAX_STARTS_IN_FLIGHT = 32;

/**
 * A start waiting: a threat alert's, or its storm's follow-up's. Each clears its event's pending
 * mark once made; an alert's only when this process wrote the event (`opened`).
 */
type Waiting =
  | { call: 'alert'; input: Start; opened: boolean }
  | { call: 'followUp'; input: FollowUp; opened: boolean };

/**
 * Starts threat alerts, and their storms' follow-ups, off the recorder's path, in the order they
 * were asked for, at most `MAX_STARTS_IN_FLIGHT` at once; a start asked for again while it waits
 * is sent once. Each call's deadline runs from when it is sent. A start that fails leaves the
 * event's pending mark: the start reconciler starts the workflow once Temporal answers. A
 * follow-up reads its storm's later hits from the event, so it is never told of them: at most
 * two starts per storm, one for a storm of one hit.
 */
export class ThreatAlertStarts {
  private readonly waiting = new Map<string, Waiting>();
  private out = 0;
  /** Events whose calls were sent: their pending marks, each kind cleared in one write. */
  private marks = { alert: [] as string[], followUp: [] as string[] };
  private clearing: Promise<void> | null = null;
  private wakeIdle: (() => void)[] = [];

  constructor(
    private readonly deps: { temporal: Temporal; threats: ThreatsRepository; log: Logger },
  ) {}

  start(input: Start, opened: boolean): void {
    this.ask({ call: 'alert', input, opened });
  }

  /** Starts a storm's follow-up, its event marked pending by the tripwires' seal. */
  followUp(input: FollowUp): void {
    this.ask({ call: 'followUp', input, opened: true });
  }

  private ask(call: Waiting): void {
    const key = `${call.call}:${call.input.threatEventId}`;
    const waiting = this.waiting.get(key);
    if (waiting) waiting.opened ||= call.opened;
    else this.waiting.set(key, call);
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

  private async send(waiting: Waiting): Promise<void> {
    const { temporal, log } = this.deps;
    const { threatEventId } = waiting.input;
    try {
      await temporal.client.withDeadline(Date.now() + START_DEADLINE_MS, async () => {
        if (waiting.call === 'alert') await startThreatAlert(temporal, waiting.input);
        else await startStormFollowUp(temporal, waiting.input);
      });
    } catch (err) {
      log.warn({ err, threatEventId }, `threat ${waiting.call} not started yet`);
      return;
    }
    if (waiting.opened) this.clearMark(waiting.call, threatEventId);
  }

  private clearMark(call: Waiting['call'], threatEventId: string): void {
    this.marks[call].push(threatEventId);
    this.clearing ??= this.clearMarks().finally(() => {
      this.clearing = null;
      this.wake();
    });
  }

  private async clearMarks(): Promise<void> {
    const { threats, log } = this.deps;
    while (this.marks.alert.length || this.marks.followUp.length) {
      const alerts = this.marks.alert.splice(0);
      const followUps = this.marks.followUp.splice(0);
      try {
        await Promise.all([
          alerts.length && threats.alertsStarted(alerts),
          followUps.length && threats.followUpsStarted(followUps),
        ]);
      } catch (err) {
        // The marks stay: the reconciler starts those workflows again, which starts nothing twice.
        log.warn({ err }, 'threat workflows started, pending marks not cleared');
      }
    }
  }
}
