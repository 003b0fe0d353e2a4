import { createTransport, type Transporter } from 'nodemailer';
import { emailMessage } from '../alert-rendering';
import { REQUEST_TIMEOUT_MS, type Attempt } from '../http-delivery';
import { DELIVERY_ID_HEADER, type ChannelProvider } from './provider';

type EmailMessage = ReturnType<typeof emailMessage> & { headers: Record<string, string> };

type SmtpAnswer =
  | { kind: 'accepted'; response: string | undefined }
  | { kind: 'refused'; code: number | undefined; message: string }
  | { kind: 'timeout' };

/** The deployment's SMTP server (SMTP_URL) and sender (SMTP_FROM): one connection pool. */
export interface SmtpServer {
  transport: Transporter;
  from: string;
}

export function smtpServer(smtpUrl: string, from: string): SmtpServer {
  return {
    transport: createTransport({
      url: smtpUrl,
      connectionTimeout: 5_000,
      greetingTimeout: 5_000,
      socketTimeout: REQUEST_TIMEOUT_MS,
    }),
    from,
  };
}

/** An email's receiver: the account's address, through the deployment's server. */
export interface EmailTo {
  address: string;
  smtp: SmtpServer;
}

/** The built-in email channel: through the deployment's SMTP server to the account's address. */
export const emailProvider: ChannelProvider<EmailTo, EmailMessage, SmtpAnswer> = {
  render(alert) {
    return {
      ...emailMessage(alert.payload),
      headers: { 'X-Service-Event': alert.payload.event, [DELIVERY_ID_HEADER]: alert.deliveryId },
    };
  },

  /** One attempt, within the same limit as an HTTP delivery. */
  async send(message, { address, smtp }) {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<SmtpAnswer>((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'timeout' }), REQUEST_TIMEOUT_MS);
    });
    const sending = smtp.transport.sendMail({ from: smtp.from, to: address, ...message }).then(
      (info: { response?: string }): SmtpAnswer => ({ kind: 'accepted', response: info.response }),
      (err: unknown): SmtpAnswer => {
        const { responseCode, message: text } = err as { responseCode?: number; message?: string };
        return { kind: 'refused', code: responseCode, message: text ?? String(err) };
      },
    );
    try {
      return await Promise.race([sending, deadline]);
    } finally {
      clearTimeout(timer);
    }
  },

  /** SMTP reply codes: 5xx is a permanent refusal, anything else (4xx, no answer) may pass later. */
  classify(answer): Attempt {
    switch (answer.kind) {
      case 'accepted':
        return {
          verdict: 'delivered',
          status: Number(/^\d{3}/.exec(answer.response ?? '')?.[0] ?? 250),
          error: null,
        };
      case 'refused':
        return {
          verdict: answer.code !== undefined && answer.code >= 500 ? 'give-up' : 'retry',
          status: answer.code ?? null,
          error: answer.message,
        };
      case 'timeout':
        return {
          verdict: 'retry',
          status: null,
          error: `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`,
        };
    }
  },
};
