import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  /** Whether the client switched to TLS (STARTTLS) before sending. */
  secure: boolean;
  mail: ParsedMail;
}

/**
 * A real SMTP listener on 127.0.0.1 offering STARTTLS with the test CA's certificate. Every RCPT TO
 * is counted; a recipient can be made to answer with a reply code to test refusals.
 */
export class SmtpListener {
  readonly received: ReceivedMail[] = [];
  readonly rcptAttempts: string[] = [];
  private readonly refusals = new Map<string, number>();

  private readonly server = new SMTPServer({
    key: readFileSync(process.env.TEST_TLS_KEY!),
    cert: readFileSync(process.env.TEST_TLS_CERT!),
    authOptional: true,
    logger: false,
    onRcptTo: (address, _session, callback) => {
      this.rcptAttempts.push(address.address);
      const code = this.refusals.get(address.address);
      if (!code) return callback();
      callback(Object.assign(new Error('refused by the test listener'), { responseCode: code }));
    },
    onData: (stream, session, callback) => {
      simpleParser(stream).then(
        (mail) => {
          const to = session.envelope.rcptTo.map((r) => r.address);
          this.received.push({ to, secure: session.secure, mail });
          callback();
        },
        (err: Error) => callback(err),
      );
    },
  });

  private constructor() {}

  static async start(): Promise<SmtpListener> {
    const listener = new SmtpListener();
    listener.server.listen(0, '127.0.0.1');
    await once(listener.server.server, 'listening');
    return listener;
  }

  get url(): string {
    return `smtp://127.0.0.1:${(this.server.server.address() as AddressInfo).port}`;
  }

  /** RCPT TO for this address answers `code` from now on. */
  refuse(address: string, code: number): void {
    this.refusals.set(address, code);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
