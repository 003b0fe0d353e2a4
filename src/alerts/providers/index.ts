import { discordProvider } from './discord';
import type { HttpChannelProvider } from './provider';
import { pagerDutyProvider } from './pagerduty';
import { slackProvider } from './slack';
import { teamsProvider } from './teams';
import { webhookProvider } from './webhook';

/**
 * The channel kinds an account configures with a URL. Adding one is a module with its rendering
 * and a line here; the API, the console's kind list and delivery follow.
 */
export const CHANNEL_PROVIDERS = {
  webhook: webhookProvider,
  slack: slackProvider,
  discord: discordProvider,
  teams: teamsProvider,
  pagerduty: pagerDutyProvider,
} as const satisfies Record<string, HttpChannelProvider>;

export type ChannelKind = keyof typeof CHANNEL_PROVIDERS;
export const CHANNEL_KINDS = Object.keys(CHANNEL_PROVIDERS) as [ChannelKind, ...ChannelKind[]];
