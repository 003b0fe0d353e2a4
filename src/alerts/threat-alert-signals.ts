import type { ThreatsRepository } from '../canaries/threats.repository';
import type { Logger } from '../logger';
import { START_DEADLINE_MS, type Temporal } from '../temporal/client';
import type { ThreatAlertInput } from '../../workflows/shared';
import { signalThreatAlert } from './alert-workflows';

type Signal = Omit<ThreatAlertInput, 'kind' | 'recoveryMs'>;

interface Due {
  input: Signal;
  hits: number;
  /** The event was written by this process: its pending mark is cleared once the alert starts. */
  opened: boolean;
}

/**
 * Starts or signals threat alerts off the recorder's path, one call per event at a time: hits of
 * an event that arrive while its call is out are added up and go in the next one, so a flood makes
 * one call per storm per round rather than one per hit. Each call's deadline runs from when it is
 * sent, not from when its hits were recorded. A call that fails leaves the event's pending mark:
 * the start reconciler starts the alert once Temporal answers.
 */
export class ThreatAlertSignals {
  private readonly due = new Map<string, Due>();
  private sending: Promise<void> | null = null;

  constructor(
    private readonly deps: { temporal: Temporal; threats: ThreatsRepository; log: Logger },
  ) {}

  signal(input: Signal, hits: number, opened: boolean): void {
    const due = this.due.get(input.threatEventId);
    if (due) {
      due.hits += hits;
      due.opened ||= opened;
    } else {
      this.due.set(input.threatEventId, { input, hits, opened });
    }
    this.sending ??= this.send().finally(() => (this.sending = null));
  }

  /** Resolves once every signal asked for so far has been sent (or has failed). */
  async idle(): Promise<void> {
    while (this.sending) await this.sending;
  }

  private async send(): Promise<void> {
    while (this.due.size) {
      const round = [...this.due.values()];
      this.due.clear();
      const started = await Promise.all(round.map((due) => this.start(due)));
      const opened = round.filter((due, i) => due.opened && started[i]);
      if (!opened.length) continue;
      try {
        await this.deps.threats.alertsStarted(opened.map((due) => due.input.threatEventId));
      } catch (err) {
        // The marks stay: the reconciler signals those alerts again, with no hits to add.
        this.deps.log.warn({ err }, 'threat alerts started, pending marks not cleared');
      }
    }
  }

  private async start({ input, hits }: Due): Promise<boolean> {
    const { temporal, log } = this.deps;
    try {
      await temporal.client.withDeadline(Date.now() + START_DEADLINE_MS, () =>
        signalThreatAlert(temporal, input, hits),
      );
      return true;
    } catch (err) {
      log.warn({ err, threatEventId: input.threatEventId }, 'threat alert not started yet');
      return false;
    }
  }
}
