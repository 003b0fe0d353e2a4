import type { WeeklyDigests } from '../src/weekly/weekly-digest';
import {
  DEFAULT_WEEKLY_SETTINGS,
  type WeeklySettingsRepository,
} from '../src/weekly/weekly-settings.repository';
import type { AlertPayloadJson, WeeklyDigestInput } from '../workflows/shared';

export function weeklyDigestActivities({
  settings,
  digests,
}: {
  settings: WeeklySettingsRepository;
  digests: WeeklyDigests;
}) {
  return {
    /**
     * The account's digest of the week before now and the channels it goes to; null when there is
     * nothing to send (no channel chosen, or a scheduled run of a digest turned off since).
     */
    async composeWeeklyDigest(
      input: WeeklyDigestInput,
    ): Promise<{ payload: AlertPayloadJson; channelIds: string[] } | null> {
      const chosen = (await settings.find(input.accountId)) ?? DEFAULT_WEEKLY_SETTINGS;
      if ((input.scheduled && !chosen.enabled) || !chosen.channels.length) return null;
      const payload = await digests.compose(input.accountId, chosen, new Date());
      return { payload, channelIds: chosen.channels };
    },
  };
}
