import type { UsersRepository } from '../accounts/users.repository';
import { resolveSafeTarget, UnsafeTargetError } from './address-safety';
import { BUILT_IN_CHANNEL_IDS, isBuiltInChannel, type BuiltInSettings } from './built-in-channels';
import type { ChannelsRepository } from './channels.repository';
import type { Attempt, AttemptResult } from './http-delivery';
import { CHANNEL_PROVIDERS } from './providers';
import { EmailProvider } from './providers/email';
import type { ChannelProvider, HttpMessage, HttpTo, OutgoingAlert } from './providers/provider';
import { TelegramProvider } from './providers/telegram';

/** An attempt that cannot be made at all: refused for good, nothing sent. */
const refused = (error: string): Attempt => ({ verdict: 'give-up', status: null, error });

async function once<To, Message, Answer>(
  provider: ChannelProvider<To, Message, Answer>,
  alert: OutgoingAlert,
  to: To,
): Promise<Attempt> {
  return provider.classify(await provider.send(provider.render(alert, to), to));
}

/**
 * One attempt to any channel, through its kind's provider. The channel and the account are read
 * again on every attempt: a channel deleted, disabled or re-pointed in between is honoured.
 */
export class ChannelSender {
  private readonly email: EmailProvider | undefined;
  private readonly telegram: TelegramProvider | undefined;

  constructor(
    private readonly channels: ChannelsRepository,
    private readonly users: UsersRepository,
    private readonly allowPrivateTargets: boolean,
    builtIns: BuiltInSettings,
  ) {
    this.email = builtIns.smtpUrl
      ? new EmailProvider(builtIns.smtpUrl, builtIns.smtpFrom)
      : undefined;
    this.telegram = builtIns.telegramBotToken
      ? new TelegramProvider({
          token: builtIns.telegramBotToken,
          apiBase: builtIns.telegramApiBase,
        })
      : undefined;
  }

  async attempt(accountId: string, channelId: string, alert: OutgoingAlert): Promise<Attempt> {
    if (isBuiltInChannel(channelId)) {
      const user = await this.users.findById(accountId);
      if (!user) return refused('account deleted');
      if (channelId === BUILT_IN_CHANNEL_IDS.email && this.email) {
        return once(this.email, alert, user.email);
      }
      if (channelId === BUILT_IN_CHANNEL_IDS.chat && this.telegram && user.telegramChatId) {
        return once(this.telegram, alert, user.telegramChatId);
      }
      return refused(`${channelId} is not configured`);
    }
    const channel = await this.channels.find(accountId, channelId);
    if (!channel || channel.disabled) {
      return refused('channel deleted or disabled');
    }
    let target;
    try {
      target = await resolveSafeTarget(channel.url, {
        requireHttps: true,
        allowPrivate: this.allowPrivateTargets,
      });
    } catch (err) {
      if (!(err instanceof UnsafeTargetError)) throw err;
      return refused(`unsafe target: ${err.message}`);
    }
    const to: HttpTo = {
      secret: channel.secret,
      standardWebhooks: channel.standardWebhooks,
      target,
    };
    return once<HttpTo, HttpMessage, AttemptResult>(CHANNEL_PROVIDERS[channel.kind], alert, to);
  }
}
