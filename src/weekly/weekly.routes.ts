import { z } from 'zod';
import type { ChannelsRepository } from '../alerts/channels.repository';
import { isBuiltInChannel } from '../alerts/built-in-channels';
import { callerAccountId } from '../auth/caller';
import type { Clock } from '../clock';
import { DomainError } from '../errors';
import { operationsFor } from '../http/operation';
import { START_DEADLINE_MS, type Temporal } from '../temporal/client';
import { startWeeklyDigestNow, syncWeeklySchedule } from './weekly-schedules';
import {
  DEFAULT_WEEKLY_SETTINGS,
  WEEKDAYS,
  type StoredWeeklySettings,
  type WeeklySettings,
  type WeeklySettingsRepository,
} from './weekly-settings.repository';

/** Most channels one digest goes to. */
const MAX_CHANNELS = 10;

/** An IANA zone name (`Europe/Berlin`, `UTC`) that this runtime knows; offsets are not zones. */
const timeZone = z
  .string()
  .max(64)
  .refine((zone) => /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(zone) && knownZone(zone), {
    message: 'an IANA time zone name, such as Europe/Berlin or UTC',
  });

function knownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export const weeklySchema = z
  .object({
    enabled: z.boolean(),
    weekday: z.enum(WEEKDAYS),
    hour: z.number().int().min(0).max(23),
    time_zone: timeZone,
    channels: z
      .array(z.string().min(1).max(100))
      .max(MAX_CHANNELS)
      .refine((ids) => new Set(ids).size === ids.length, { message: 'a channel is listed twice' }),
  })
  .strict()
  .refine((body) => !body.enabled || body.channels.length > 0, {
    path: ['channels'],
    message: 'at least one channel when the digest is enabled',
  });

export const weeklyView = z
  .object({
    enabled: z.boolean(),
    weekday: z.enum(WEEKDAYS),
    hour: z.number().int(),
    time_zone: z.string(),
    channels: z.array(z.string()),
    /** False until the Temporal Schedule matches these settings (the reconciler finishes it). */
    schedule_synced: z.boolean(),
  })
  .meta({ id: 'WeeklyDigestSettings' });

function describe(
  settings: WeeklySettings & Partial<Pick<StoredWeeklySettings, 'schedulePendingSince'>>,
): z.output<typeof weeklyView> {
  return {
    enabled: settings.enabled,
    weekday: settings.weekday,
    hour: settings.hour,
    time_zone: settings.timeZone,
    channels: settings.channels,
    schedule_synced: !settings.schedulePendingSince,
  };
}

export interface WeeklyDeps {
  weekly: WeeklySettingsRepository;
  channels: ChannelsRepository;
  temporal: Temporal;
  clock: Clock;
}
const operation = operationsFor<WeeklyDeps>('Weekly digest');

/** Every listed channel must be the account's own, or a built-in. */
async function checkChannels(channels: ChannelsRepository, accountId: string, ids: string[]) {
  const own = new Set((await channels.list(accountId)).map((c) => c.id));
  const unknown = ids
    .map((id, i) => ({ id, i }))
    .filter(({ id }) => !own.has(id) && !isBuiltInChannel(id));
  if (unknown.length) {
    throw new DomainError(
      'invalid',
      unknown
        .map(({ id, i }) => `body.channels[${i}]: no alert channel ${id} in this account`)
        .join('; '),
    );
  }
}

/** `/api/weekly` (session, or an API key with `threats:read`): the account's weekly digest. */
export const weeklyOperations = [
  operation({
    operationId: 'getWeeklyDigest',
    method: 'get',
    path: '/api/weekly',
    summary: 'Weekly digest settings',
    description:
      'When the digest goes out (`weekday` and `hour` in the IANA `time_zone`) and to which alert channels (`builtin:email` and `builtin:chat` included). Off, Monday 09:00 UTC, no channel until set.',
    auth: 'sessionOrApiKey',
    success: { status: 200, description: 'The settings' },
    response: weeklyView,
    handler: async ({ res }, { weekly }) =>
      describe((await weekly.find(callerAccountId(res))) ?? DEFAULT_WEEKLY_SETTINGS),
  }),
  operation({
    operationId: 'updateWeeklyDigest',
    method: 'put',
    path: '/api/weekly',
    summary: 'Set the weekly digest',
    description:
      "Replaces the settings and the account's Temporal Schedule with them: created or updated when `enabled`, paused when not. Should Temporal not answer, the settings are kept with `schedule_synced: false` and the schedule follows within seconds of Temporal's return.",
    auth: 'sessionOrApiKey',
    body: weeklySchema,
    success: { status: 200, description: 'The settings' },
    response: weeklyView,
    examples: {
      body: {
        enabled: true,
        weekday: 'monday',
        hour: 9,
        time_zone: 'Europe/Berlin',
        channels: ['builtin:email'],
      },
    },
    handler: async ({ body, req, res }, { weekly, channels, temporal, clock }) => {
      const accountId = callerAccountId(res);
      await checkChannels(channels, accountId, body.channels);
      const saved = await weekly.save(
        accountId,
        {
          enabled: body.enabled,
          weekday: body.weekday,
          hour: body.hour,
          timeZone: body.time_zone,
          channels: body.channels,
        },
        clock(),
      );
      try {
        await temporal.client.withDeadline(Date.now() + START_DEADLINE_MS, () =>
          syncWeeklySchedule(temporal, saved),
        );
        await weekly.scheduleSynced(accountId, saved.version);
        return describe({ ...saved, schedulePendingSince: null });
      } catch (err) {
        // The settings keep their pending mark: the start reconciler brings the schedule in step.
        req.log.warn({ err, accountId }, 'weekly digest schedule not updated yet');
        return describe(saved);
      }
    },
  }),
  operation({
    operationId: 'sendWeeklyDigestNow',
    method: 'post',
    path: '/api/weekly/send-now',
    summary: 'Send the weekly digest now',
    description:
      "The digest of the last seven days, to the chosen channels, through the same workflow as the schedule's (whether or not the digest is enabled). Its deliveries show in each channel's list; the run in `/api/workflow-runs`.",
    auth: 'sessionOrApiKey',
    success: { status: 202, description: '`{workflow_id}`' },
    response: z.object({ workflow_id: z.string() }),
    errors: { 409: 'A digest of this account is being sent now' },
    handler: async ({ res }, { weekly, temporal }) => {
      const accountId = callerAccountId(res);
      const settings = await weekly.find(accountId);
      if (!settings?.channels.length) {
        throw new DomainError(
          'conflict',
          'No channel is chosen for the weekly digest: set channels with PUT /api/weekly first',
        );
      }
      const { workflowId } = await startWeeklyDigestNow(temporal, accountId);
      return { workflow_id: workflowId };
    },
  }),
];
