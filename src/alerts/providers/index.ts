import { discordProvider } from './discord';
import { emailProvider } from './email';
import { pagerDutyProvider } from './pagerduty';
import type { HttpChannelProvider } from './provider';
import { slackProvider } from './slack';
import { teamsProvider } from './teams';
import { telegramProvider } from './telegram';
import { webhookProvider } from './webhook';

/** The kinds an account configures with a URL (and, for some, a secret). */
const URL_PROVIDERS = {
  webhook: webhookProvider,
  slack: slackProvider,
  discord: discordProvider,
  teams: teamsProvider,
  pagerduty: pagerDutyProvider,
} as const satisfies Record<string, HttpChannelProvider>;

/**
 * Every channel kind an alert goes to, one provider each: the kinds an account configures with a
 * URL, and the deployment's built-in email and chat (to the account's address and chat id).
 * Adding a URL kind is a module with its rendering and a line here; the API, the console's kind
 * list and delivery follow.
 */
export const CHANNEL_PROVIDERS = {
  ...URL_PROVIDERS,
  email: emailProvider,
  chat: telegramProvider,
} as const;

export type AnyChannelKind = keyof typeof CHANNEL_PROVIDERS;

/** What a kind's provider sends to. */
export type ReceiverOf<K extends AnyChannelKind> = Parameters<
  (typeof CHANNEL_PROVIDERS)[K]['send']
>[1];

/** The kinds an account can create. */
export type ChannelKind = keyof typeof URL_PROVIDERS;
export const CHANNEL_KINDS = Object.keys(URL_PROVIDERS) as [ChannelKind, ...ChannelKind[]];
