import type { UsersRepository } from '../accounts/users.repository';
import type { DeliveryTarget } from '../../workflows/shared';
import { BUILT_IN_CHANNEL_IDS, isBuiltInChannel, type BuiltInSettings } from './built-in-channels';
import type { SendingState } from './channel-sender';
import type { ChannelsRepository } from './channels.repository';
import { subscribes, type RoutedAlert } from './routing';

export interface ReadTargets {
  /** The channels that receive this alert (all read, when none is given). */
  route: (alert?: RoutedAlert) => DeliveryTarget[];
  /** A target's channel or account as read. */
  sending: (channelId: string) => SendingState;
}

/**
 * The channels that receive an alert: the chosen ones (a test, a resend, a weekly digest's
 * channels, built-ins among them) whatever they subscribe to; otherwise the account's channels
 * that subscribe to it, and the built-ins. Read first, routed after, so a threat alert can read
 * them while its payload (and so its level) is being prepared.
 */
export class DeliveryTargets {
  constructor(
    private readonly channels: ChannelsRepository,
    private readonly users: UsersRepository,
    private readonly builtIns: BuiltInSettings,
  ) {}

  /**
   * Reads the account's channels and, when a built-in is configured, the account (its address and
   * chat id) at once. `sending` is what a first attempt sends with: the channel or the account as
   * read here.
   */
  async read(accountId: string, channelIds?: string[]): Promise<ReadTargets> {
    const chosen = (channelId: string) => !channelIds || channelIds.includes(channelId);
    const builtIn =
      (chosen(BUILT_IN_CHANNEL_IDS.chat) && this.builtIns.telegramBotToken) ||
      (chosen(BUILT_IN_CHANNEL_IDS.email) && this.builtIns.smtpUrl);
    const [all, user] = await Promise.all([
      this.channels.list(accountId),
      builtIn ? this.users.findById(accountId) : undefined,
    ]);
    const sending = (channelId: string): SendingState =>
      isBuiltInChannel(channelId)
        ? { user: user ?? null }
        : { channel: all.find((c) => c.id === channelId) ?? null };
    const route = (alert?: RoutedAlert) => {
      const picked = channelIds
        ? all.filter((c) => channelIds.includes(c.id))
        : all.filter((c) => !alert || subscribes(c, alert));
      const targets: DeliveryTarget[] = picked.map((c) => ({
        channelId: c.id,
        kind: c.kind,
        name: c.name,
        ...(c.disabled && { skip: 'channel disabled' }),
      }));
      const builtIn = (channelId: string, kind: string, name: string): DeliveryTarget => {
        const skip = this.builtInSkip(channelId, user?.telegramChatId);
        return { channelId, kind, name, ...(skip && { skip }) };
      };
      return [
        ...targets,
        builtIn(BUILT_IN_CHANNEL_IDS.email, 'email', 'account email'),
        builtIn(BUILT_IN_CHANNEL_IDS.chat, 'chat', 'Telegram chat'),
      ].filter((target) => chosen(target.channelId));
    };
    return { route, sending };
  }

  /** Why a built-in cannot send for this account, or null when it can. */
  private builtInSkip(channelId: string, telegramChatId: string | null | undefined): string | null {
    if (channelId === BUILT_IN_CHANNEL_IDS.email) {
      return this.builtIns.smtpUrl ? null : 'not configured (SMTP_URL unset)';
    }
    if (!this.builtIns.telegramBotToken) return 'not configured (TELEGRAM_BOT_TOKEN unset)';
    return telegramChatId ? null : 'not configured (no Telegram chat id in the account settings)';
  }
}
