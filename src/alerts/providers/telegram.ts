import { telegramText } from '../alert-rendering';
import { resolveSafeTarget, UnsafeTargetError } from '../address-safety';
import { httpAttempt, postOnce, type AttemptResult } from '../http-delivery';
import { USER_AGENT, type ChannelProvider, type HttpMessage } from './provider';

/** The deployment's Telegram bot (TELEGRAM_BOT_TOKEN, TELEGRAM_API_BASE). */
export interface TelegramBot {
  token: string;
  apiBase: string;
}

/** A chat message's receiver: the chat id in the account's settings, through the deployment's bot. */
export interface ChatTo {
  chatId: string;
  bot: TelegramBot;
}

/**
 * The built-in messaging-chat channel: Telegram Bot API `sendMessage`. The base URL is the
 * operator's (a local Bot API server works too).
 */
export const telegramProvider: ChannelProvider<ChatTo, HttpMessage, AttemptResult> = {
  render(alert, { chatId }) {
    return {
      body: JSON.stringify({
        chat_id: chatId,
        text: telegramText(alert.payload),
        parse_mode: 'HTML',
        link_preview_options: { is_disabled: true },
      }),
      headers: { 'Content-Type': 'application/json', 'User-Agent': USER_AGENT },
    };
  },

  async send(message, { bot }) {
    const url = `${bot.apiBase.replace(/\/+$/, '')}/bot${bot.token}/sendMessage`;
    try {
      // The operator chose this address, so private ones are fine; the connection is still pinned.
      const target = await resolveSafeTarget(url, { requireHttps: false, allowPrivate: true });
      return await postOnce(target, message.body, message.headers);
    } catch (err) {
      if (!(err instanceof UnsafeTargetError)) throw err;
      return { kind: 'network-error', message: `Telegram API: ${err.message}` };
    }
  },

  classify: httpAttempt,
};
