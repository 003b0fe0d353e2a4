import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { AgentsRepository } from '../agent/agents.repository';
import { startAgentWatch } from '../agent/agent-workflows';
import { startStormFollowUp, startThreatAlert } from '../alerts/alert-workflows';
import type { ThreatsRepository } from '../canaries/threats.repository';
import type { Clock } from '../clock';
import type { Logger } from '../logger';
import { syncWeeklySchedule } from '../weekly/weekly-schedules';
import type { WeeklySettingsRepository } from '../weekly/weekly-settings.repository';
import type { Temporal } from './client';

export interface StartReconcilerSettings {
  /** A start younger than this is left to the request that is making it. */
  graceMs: number;
  /** Pause between passes. */
  intervalMs: number;
  /** Most starts per kind in one pass (the rest wait for the next). */
  batch: number;
  /** Storm follow-ups' gathering, as the tripwires start them. */
  gather: { quietMs: number; maxMs: number };
}

export const DEFAULT_RECONCILER_SETTINGS: Omit<StartReconcilerSettings, 'gather'> = {
  graceMs: 5_000,
  intervalMs: 5_000,
  batch: 100,
};

export interface ReconcileResult {
  alerts: number;
  /** Storm follow-ups started. */
  followUps: number;
  watches: number;
  /** Weekly digest Schedules brought in step with their settings. */
  schedules: number;
}

/**
 * The outbox's other half. A threat event and an agent are written with a "pending" mark before
 * their workflow is started, and the mark is cleared once the start is confirmed; a threat
 * event's later hits mark it until its storm's follow-up is started. When Temporal
 * was down at that moment the mark stays, and this loop starts what is missing once Temporal
 * answers. Starts are idempotent through the workflow ids (`alert-<threatEventId>` with
 * REJECT_DUPLICATE, `agent-watch-<agentId>`), so any number of API replicas may run it, and a
 * start that raced the request's own one sends nothing twice. Weekly digest settings carry the
 * same kind of mark until their Schedule matches them; syncing one is idempotent too.
 */
export class StartReconciler {
  private readonly stopping = new AbortController();
  private loop: Promise<void> | null = null;

  constructor(
    private readonly deps: {
      threats: ThreatsRepository;
      agents: AgentsRepository;
      weekly: WeeklySettingsRepository;
      temporal: Temporal;
      clock: Clock;
      log: Logger;
      settings: StartReconcilerSettings;
    },
  ) {}

  /** One pass: starts every workflow marked pending before `graceMs` ago (up to `batch` each). */
  async reconcileOnce(): Promise<ReconcileResult> {
    const { threats, agents, weekly, temporal, clock, settings } = this.deps;
    const before = new Date(clock().getTime() - settings.graceMs);
    const result: ReconcileResult = { alerts: 0, followUps: 0, watches: 0, schedules: 0 };
    for (const event of await threats.pendingAlerts(before, settings.batch)) {
      // With no event in its input, the alert reads the event's first hit and count itself.
      await startThreatAlert(temporal, {
        accountId: event.accountId,
        threatEventId: event.id,
      });
      await threats.alertsStarted([event.id]);
      result.alerts++;
    }
    // Later hits recorded by an API that could not start their follow-up (Temporal down, killed).
    for (const event of await threats.pendingFollowUps(before, settings.batch)) {
      await startStormFollowUp(temporal, {
        accountId: event.accountId,
        threatEventId: event.id,
        gather: settings.gather,
      });
      await threats.followUpsStarted([event.id]);
      result.followUps++;
    }
    for (const agent of await agents.pendingWatches(before, settings.batch)) {
      try {
        await startAgentWatch(temporal, {
          accountId: agent.accountId,
          agentId: agent.id,
          intervalMs: agent.heartbeatIntervalSeconds * 1000,
        });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
      await agents.watchStarted(agent.id);
      result.watches++;
    }
    // Weekly settings written while Temporal was down (or by an API killed before its schedule
    // call): the schedule is made to match the settings as they are now.
    for (const pending of await weekly.pendingSchedules(before, settings.batch)) {
      await syncWeeklySchedule(temporal, pending);
      await weekly.scheduleSynced(pending.accountId, pending.version);
      result.schedules++;
    }
    return result;
  }

  /** Runs passes until `stop`; a pass that fails (Temporal or the database down) is retried. */
  start(): void {
    const { temporal, log, settings } = this.deps;
    this.loop = (async () => {
      const { signal } = this.stopping;
      while (!signal.aborted) {
        try {
          await temporal.ping(2_000);
          const done = await this.reconcileOnce();
          if (Object.values(done).some(Boolean)) log.info(done, 'started missing workflows');
        } catch (err) {
          log.warn({ err }, 'start reconciler pass failed; retrying');
        }
        await sleep(settings.intervalMs, undefined, { signal }).catch(() => undefined);
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }
}
