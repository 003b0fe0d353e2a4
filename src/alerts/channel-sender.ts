import type { User, UsersRepository } from '../accounts/users.repository';
import { resolveSafeTarget, TransientLookupError, UnsafeTargetError } from './address-safety';
import { BUILT_IN_CHANNEL_IDS, isBuiltInChannel, type BuiltInSettings } from './built-in-channels';
import type { AlertChannel, ChannelsRepository } from './channels.repository';
import type { Attempt } from './http-delivery';
import { CHANNEL_PROVIDERS, type AnyChannelKind, type ReceiverOf } from './providers';
import { smtpServer, type SmtpServer } from './providers/email';
import type { ChannelProvider, OutgoingAlert } from './providers/provider';
import type { TelegramBot } from './providers/telegram';

/** A channel's kind and where its provider sends. */
type Receiver = { [K in AnyChannelKind]: { kind: K; to: ReceiverOf<K> } }[AnyChannelKind];

/** An attempt that cannot be made at all: refused for good, nothing sent. */
const refused = (error: string): Attempt => ({ verdict: 'give-up', status: null, error });

/** One attempt through the kind's provider: rendered, sent, and its answer classified. */
async function once<K extends AnyChannelKind>(
  { kind, to }: { kind: K; to: ReceiverOf<K> },
  alert: OutgoingAlert,
): Promise<Attempt> {
  // Each kind's provider takes its own receiver: the pairing is checked by `Receiver`.
  const provider = CHANNEL_PROVIDERS[kind] as unknown as ChannelProvider<
    ReceiverOf<K>,
    unknown,
    unknown
  >;
  return provider.classify(await provider.send(provider.render(alert, to), to));
}

/** What an attempt sends with, as read: the channel (absent: a built-in) and the account. */
export interface SendingState {
  channel?: AlertChannel | null;
  user?: User | null;
}

/**
 * One attempt to any channel, through its kind's provider. The channel and the account are read
 * again on every attempt (a channel deleted, disabled or re-pointed in between is honoured),
 * except the first, which sends with what was read an instant before to pick the channels.
 */
export class ChannelSender {
  private readonly smtp: SmtpServer | undefined;
  private readonly bot: TelegramBot | undefined;

  constructor(
    private readonly channels: ChannelsRepository,
    private readonly users: UsersRepository,
    private readonly allowPrivateTargets: boolean,
    builtIns: BuiltInSettings,
    /** OUTBOUND_DENY_CIDRS. */
    private readonly deny: readonly string[] = [],
  ) {
    this.smtp = builtIns.smtpUrl ? smtpServer(builtIns.smtpUrl, builtIns.smtpFrom) : undefined;
    this.bot = builtIns.telegramBotToken
      ? { token: builtIns.telegramBotToken, apiBase: builtIns.telegramApiBase }
      : undefined;
  }

  /** An attempt that reads the channel (or, for a built-in, the account) first. */
  async attempt(accountId: string, channelId: string, alert: OutgoingAlert): Promise<Attempt> {
    const state: SendingState = isBuiltInChannel(channelId)
      ? { user: await this.users.findById(accountId) }
      : { channel: await this.channels.find(accountId, channelId) };
    return this.attemptWith(channelId, state, alert);
  }

  /** An attempt with the channel or account as already read. */
  async attemptWith(
    channelId: string,
    state: SendingState,
    alert: OutgoingAlert,
  ): Promise<Attempt> {
    try {
      const receiver = await this.receiver(channelId, state, alert.now);
      return typeof receiver === 'string' ? refused(receiver) : await once(receiver, alert);
    } catch (err) {
      // A resolver that failed this once is a network error: the attempt is tried again.
      if (err instanceof TransientLookupError) {
        return { verdict: 'retry', status: null, error: err.message };
      }
      throw err;
    }
  }

  /** Where the channel's provider sends, or why nothing can be sent. */
  private async receiver(
    channelId: string,
    { channel, user }: SendingState,
    now: Date,
  ): Promise<Receiver | string> {
    if (isBuiltInChannel(channelId)) {
      if (!user) return 'account deleted';
      if (channelId === BUILT_IN_CHANNEL_IDS.email && this.smtp) {
        return { kind: 'email', to: { address: user.email, smtp: this.smtp } };
      }
      if (channelId === BUILT_IN_CHANNEL_IDS.chat && this.bot && user.telegramChatId) {
        return { kind: 'chat', to: { chatId: user.telegramChatId, bot: this.bot } };
      }
      return `${channelId} is not configured`;
    }
    if (!channel || channel.disabled) return 'channel deleted or disabled';
    try {
      const target = await resolveSafeTarget(channel.url, {
        requireHttps: true,
        allowPrivate: this.allowPrivateTargets,
        deny: this.deny,
      });
      const { secret, standardWebhooks, previousSecret } = channel;
      const overlap = previousSecret && previousSecret.until > now ? previousSecret.secret : null;
      return {
        kind: channel.kind,
        to: { secret, standardWebhooks, previousSecret: overlap, target },
      };
    } catch (err) {
      if (!(err instanceof UnsafeTargetError) || err instanceof TransientLookupError) throw err;
      return `unsafe target: ${err.message}`;
    }
  }
}
