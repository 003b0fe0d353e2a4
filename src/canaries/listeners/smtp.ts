import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import type { Logger } from '../../logger';
import { emailToken } from '../decoys';
import type { Tripwires } from '../tripwires';

const MAX_MESSAGE_BYTES = 1_000_000;

export interface DecoyMailServer {
  port: number;
  close(): Promise<void>;
}

/**
 * The SMTP listener for decoy addresses. It accepts mail only for planted, live decoys (any other
 * recipient: 550, as a mail server answers for an unknown user); accepted mail fires each decoy it
 * was addressed to. The connecting server is the sender's mail provider, recorded as the mail
 * server, never as the attacker. The message itself is read and thrown away.
 */
export async function startDecoyMailServer(deps: {
  host: string;
  port: number;
  tripwires: Tripwires;
  log: Logger;
}): Promise<DecoyMailServer> {
  const { tripwires, log } = deps;
  const decoysOf = new WeakMap<SMTPServerSession, Set<string>>();

  const server = new SMTPServer({
    name: 'mx',
    banner: 'ESMTP ready',
    size: MAX_MESSAGE_BYTES,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onRcptTo(address, session, callback) {
      tripwires.canaryFor([emailToken(address.address)]).then(
        (canaryId) => {
          if (!canaryId) {
            return callback(
              Object.assign(new Error('5.1.1 No such user here'), { responseCode: 550 }),
            );
          }
          const set = decoysOf.get(session) ?? new Set<string>();
          decoysOf.set(session, set.add(address.address));
          callback();
        },
        (err: Error) => {
          log.error({ err }, 'decoy mail: recipient lookup failed');
          callback(Object.assign(new Error('4.3.0 Try again later'), { responseCode: 451 }));
        },
      );
    },
    onData(stream, session, callback) {
      stream.resume();
      stream.on('end', () => {
        const recipients = [...(decoysOf.get(session) ?? [])];
        decoysOf.delete(session);
        const mailServer = {
          ip: session.remoteAddress.replace(/^::ffff:/, ''),
          helo: session.hostNameAppearsAs,
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        };
        // The mail is accepted only once every hit it carries is handed over.
        Promise.all(
          recipients.map((address) =>
            tripwires.recordHit({
              secrets: [emailToken(address)],
              via: 'email',
              client: { ip: '', userAgent: '' },
              mailServer,
            }),
          ),
        ).then(
          () => callback(),
          (err: Error) => {
            log.error({ err }, 'decoy mail: hit could not be handed over');
            callback(Object.assign(new Error('4.3.0 Try again later'), { responseCode: 451 }));
          },
        );
      });
    },
  });
  server.on('error', (err) => log.error({ err }, 'decoy mail listener error'));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(deps.port, deps.host, () => resolve());
  });
  return {
    port: (server.server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
