import { createTransport, type Transporter } from 'nodemailer';
import type { Config } from '../config';
import { emailMessage, telegramText } from './alert-rendering';
import { resolveSafeTarget, UnsafeTargetError, type SafeTarget } from './address-safety';
import { USER_AGENT } from './channel-requests';
import { httpAttempt, postOnce, REQUEST_TIMEOUT_MS, type Attempt } from './http-delivery';
import type { AlertPayload } from './payload';

/**
 * The deployment's built-in channels: email through SMTP to the account's address, and Telegram
 * messages to the chat id in the account's settings. Each is on only when its setting is present.
 */
export const BUILT_IN_CHANNEL_IDS = { email: 'builtin:email', chat: 'builtin:chat' } as const;

export function isBuiltInChannel(channelId: string): boolean {
  return Object.values<string>(BUILT_IN_CHANNEL_IDS).includes(channelId);
}

export interface BuiltInSettings {
  /** SMTP_URL, e.g. smtps://user:pass@mail.example.com:465 */
  smtpUrl?: string;
  smtpFrom: string;
  telegramBotToken?: string;
  telegramApiBase: string;
}

export function builtInSettings(config: Config): BuiltInSettings {
  return {
    smtpUrl: config.SMTP_URL,
    smtpFrom: config.SMTP_FROM,
    telegramBotToken: config.TELEGRAM_BOT_TOKEN,
    telegramApiBase: config.TELEGRAM_API_BASE,
  };
}

/** SMTP reply codes: 5xx is a permanent refusal, anything else (4xx, no answer) may pass later. */
function smtpFailure(err: unknown): Attempt {
  const { responseCode, message } = err as { responseCode?: number; message?: string };
  return {
    verdict: responseCode !== undefined && responseCode >= 500 ? 'give-up' : 'retry',
    status: responseCode ?? null,
    error: message ?? String(err),
  };
}

export class AlertMailer {
  private readonly transport: Transporter;

  constructor(
    smtpUrl: string,
    private readonly from: string,
  ) {
    this.transport = createTransport({
      url: smtpUrl,
      connectionTimeout: 5_000,
      greetingTimeout: 5_000,
      socketTimeout: REQUEST_TIMEOUT_MS,
    });
  }

  /** One attempt, within the same limit as an HTTP delivery. */
  async send(to: string, payload: AlertPayload, deliveryId: string): Promise<Attempt> {
    const { subject, text, html } = emailMessage(payload);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<Attempt>((resolve) => {
      timer = setTimeout(
        () =>
          resolve({
            verdict: 'retry',
            status: null,
            error: `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`,
          }),
        REQUEST_TIMEOUT_MS,
      );
    });
    const sending = this.transport
      .sendMail({
        from: this.from,
        to,
        subject,
        text,
        html,
        headers: { 'X-Service-Event': payload.event, 'X-Service-Delivery': deliveryId },
      })
      .then(
        (info: { response?: string }): Attempt => ({
          verdict: 'delivered',
          status: Number(/^\d{3}/.exec(info.response ?? '')?.[0] ?? 250),
          error: null,
        }),
        smtpFailure,
      );
    try {
      return await Promise.race([sending, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Telegram Bot API `sendMessage`; the base URL is the operator's (a local Bot API server works too). */
export async function sendTelegram(
  settings: { token: string; apiBase: string },
  chatId: string,
  payload: AlertPayload,
): Promise<Attempt> {
  const url = `${settings.apiBase.replace(/\/+$/, '')}/bot${settings.token}/sendMessage`;
  // The operator chose this address, so private ones are fine; the connection is still pinned.
  let target: SafeTarget;
  try {
    target = await resolveSafeTarget(url, { requireHttps: false, allowPrivate: true });
  } catch (err) {
    if (!(err instanceof UnsafeTargetError)) throw err;
    return { verdict: 'retry', status: null, error: `Telegram API: ${err.message}` };
  }
  const body = JSON.stringify({
    chat_id: chatId,
    text: telegramText(payload),
    parse_mode: 'HTML',
    link_preview_options: { is_disabled: true },
  });
  return httpAttempt(
    await postOnce(target, body, { 'Content-Type': 'application/json', 'User-Agent': USER_AGENT }),
  );
}
