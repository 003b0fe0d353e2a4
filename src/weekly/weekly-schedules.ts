import {
  WorkflowExecutionAlreadyStartedError,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type ScheduleDescription,
  type ScheduleOptions,
} from '@temporalio/client';
import { DomainError } from '../errors';
import { START_DEADLINE_MS, type Temporal } from '../temporal/client';
import { WEEKLY_DIGEST_EVENT } from '../alerts/payload';
import type { weeklyDigestWorkflow } from '../../workflows';
import { searchAttributes, type WeeklyDigestInput } from '../../workflows/shared';
import type { StoredWeeklySettings } from './weekly-settings.repository';

/** One Schedule per account. */
export const weeklyScheduleId = (accountId: string) => `weekly-digest-${accountId}`;

/** The schedule's note names the settings version it was made from: an older one never wins. */
const noteOf = (version: number, enabled: boolean) =>
  `settings version ${version}${enabled ? '' : ': weekly digest turned off'}`;
const versionOf = (description: ScheduleDescription) =>
  Number(/^settings version (\d+)/.exec(description.state.note ?? '')?.[1] ?? 0);

const tenant = (accountId: string) => [
  { key: searchAttributes.accountId, value: accountId },
  { key: searchAttributes.alertEvent, value: WEEKLY_DIGEST_EVENT },
];

/** What a digest's workflow starts with, from the schedule or from send-now. */
function digestStart(temporal: Temporal, input: WeeklyDigestInput) {
  const { accountId } = input;
  return {
    taskQueue: temporal.taskQueue,
    args: [input] as [WeeklyDigestInput],
    staticSummary: `Weekly digest of account ${accountId}`,
    typedSearchAttributes: tenant(accountId),
  };
}

function scheduleOptions(temporal: Temporal, settings: StoredWeeklySettings) {
  const { accountId, weekday, hour, timeZone, enabled, version } = settings;
  return {
    spec: {
      calendars: [{ dayOfWeek: weekday.toUpperCase() as 'MONDAY', hour, minute: 0, second: 0 }],
      timezone: timeZone,
    },
    action: {
      type: 'startWorkflow' as const,
      workflowType: 'weeklyDigestWorkflow',
      // The schedule adds the time it fires to this id, so each week's run has its own.
      workflowId: `weekly-digest-${accountId}`,
      ...digestStart(temporal, { accountId, scheduled: true }),
    },
    // A digest still sending when the next is due (after a long outage) is not doubled; one
    // missed while Temporal was down is still sent within the hour.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1h' },
    state: { paused: !enabled, note: noteOf(version, enabled) },
    typedSearchAttributes: tenant(accountId),
  } satisfies Omit<ScheduleOptions, 'scheduleId'>;
}

class NewerSchedule extends Error {}

/**
 * Makes the account's Schedule match its settings: created or updated (and unpaused) when the
 * digest is on, paused when it is off (a schedule never made stays unmade). Idempotent, so the
 * request that changed the settings and the reconciler may both run it; a schedule already made
 * from newer settings is left alone.
 */
export async function syncWeeklySchedule(
  temporal: Temporal,
  settings: StoredWeeklySettings,
): Promise<void> {
  const scheduleId = weeklyScheduleId(settings.accountId);
  const options = scheduleOptions(temporal, settings);
  for (let tries = 0; ; tries++) {
    try {
      await temporal.client.schedule.getHandle(scheduleId).update((previous) => {
        if (versionOf(previous) > settings.version) throw new NewerSchedule();
        return options;
      });
      return;
    } catch (err) {
      if (err instanceof NewerSchedule) return;
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
    if (!settings.enabled) return;
    try {
      await temporal.client.schedule.create({ scheduleId, ...options });
      return;
    } catch (err) {
      // Made by another request in between: update that one instead, once.
      if (!(err instanceof ScheduleAlreadyRunning) || tries > 0) throw err;
    }
  }
}

/** Deletes the account's Schedule, if it has one (its account is erased). */
export async function deleteWeeklySchedule(temporal: Temporal, accountId: string): Promise<void> {
  try {
    await temporal.client.withDeadline(Date.now() + START_DEADLINE_MS, () =>
      temporal.client.schedule.getHandle(weeklyScheduleId(accountId)).delete(),
    );
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
}

/**
 * Sends the account's digest now, through the same workflow as the schedule's. One at a time per
 * account: a second while the first still runs is refused (409), so a caller cannot flood its
 * channels.
 */
export async function startWeeklyDigestNow(
  temporal: Temporal,
  accountId: string,
): Promise<{ workflowId: string }> {
  const workflowId = `weekly-digest-${accountId}-now`;
  try {
    await temporal.client.workflow.start<typeof weeklyDigestWorkflow>('weeklyDigestWorkflow', {
      workflowId,
      ...digestStart(temporal, { accountId }),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    throw new DomainError(
      'conflict',
      'A digest of this account is being sent now: wait for it to end',
    );
  }
  return { workflowId };
}
