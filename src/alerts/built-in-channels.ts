import type { Config } from '../config';

/**
 * The deployment's built-in channels: email through SMTP to the account's address, and Telegram
 * messages to the chat id in the account's settings. Each is on only when its setting is present;
 * their providers (`email`, `chat`) are in the one provider table with the URL kinds.
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
