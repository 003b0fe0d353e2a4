import { telegramText } from '../alert-rendering';
import { resolveSafeTarget, UnsafeTargetError } from '../address-safety';
import { httpAttempt, postOnce, type Attempt, type AttemptResult } from '../http-delivery';
import { USER_AGENT, type ChannelProvider, type HttpMessage, type OutgoingAlert } from './provider';

/**
 * The built-in messaging-chat channel: Telegram Bot API `sendMessage` to the chat id in the
 * account's settings. The base URL is the operator's (a local Bot API server works too).
 */
export class TelegramProvider implements ChannelProvider<string, HttpMessage, AttemptResult> {
  constructor(private readonly settings: { token: string; apiBase: string }) {}

  render(alert: OutgoingAlert, chatId: string): HttpMessage {
    return {
      body: JSON.stringify({
        chat_id: chatId,
        text: telegramText(alert.payload),
        parse_mode: 'HTML',
        link_preview_options: { is_disabled: true },
      }),
      headers: { 'Content-Type': 'application/json', 'User-Agent': USER_AGENT },
    };
  }

  async send(message: HttpMessage): Promise<AttemptResult> {
    const { token, apiBase } = this.settings;
    const url = `${apiBase.replace(/\/+$/, '')}/bot${token}/sendMessage`;
    try {
      // The operator chose this address, so private ones are fine; the connection is still pinned.
      const target = await resolveSafeTarget(url, { requireHttps: false, allowPrivate: true });
      return await postOnce(target, message.body, message.headers);
    } catch (err) {
      if (!(err instanceof UnsafeTargetError)) throw err;
      return { kind: 'network-error', message: `Telegram API: ${err.message}` };
    }
  }

  classify(answer: AttemptResult): Attempt {
    return httpAttempt(answer);
  }
}
