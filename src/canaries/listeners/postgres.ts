import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import type { Logger } from '../../logger';
import { postgresUserToken } from '../decoys';
import type { Tripwires } from '../tripwires';

/** Request codes a client may send instead of a startup message (PostgreSQL protocol 3.0). */
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 3;
/** A real startup message is a few hundred bytes; a password far less than this. */
const MAX_STARTUP_BYTES = 10_000;
const MAX_PASSWORD_BYTES = 1_024;
const IDLE_MS = 10_000;
const MAX_CONNECTIONS = 256;

/**
 * What one client said, in plain values: its startup parameters and the password it sent. Fires
 * when the password (or the user name) is a live canary's token; the caller answers the ordinary
 * authentication failure either way, after this returns.
 */
export async function recordPostgresLogin(
  tripwires: Tripwires,
  login: { ip: string; parameters: Map<string, string>; password: string },
): Promise<void> {
  const user = login.parameters.get('user') ?? '';
  const application = login.parameters.get('application_name') || 'postgres';
  await tripwires.recordHit({
    secrets: [login.password, user && postgresUserToken(user)],
    via: 'postgres',
    client: {
      ip: login.ip,
      userAgent: `${application} user=${user} database=${login.parameters.get('database') ?? user}`,
    },
  });
}

/** An ErrorResponse ('E') message with the fields a server sends on a failed login. */
function errorResponse(code: string, message: string): Buffer {
  return message5('E', Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`));
}

function message5(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0);
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/** AuthenticationCleartextPassword: the client answers with the password as it is. */
const ASK_CLEARTEXT = message5('R', Buffer.from([0, 0, 0, 3]));

function parseParameters(body: Buffer): Map<string, string> | null {
  const parts = body.toString('utf8').split('\0');
  // key\0value\0 … \0: an even number of strings, then the terminating empty one (and split's tail).
  if (parts.length < 2 || parts.at(-1) !== '' || parts.at(-2) !== '') return null;
  const pairs = parts.slice(0, -2);
  if (pairs.length % 2) return null;
  const map = new Map<string, string>();
  for (let i = 0; i < pairs.length; i += 2) map.set(pairs[i]!, pairs[i + 1]!);
  return map;
}

/**
 * One connection: (SSL or GSS request → 'N') → startup message → ask for a cleartext password →
 * password → record → ordinary FATAL 28P01, close. Anything malformed, oversized or out of order
 * closes the connection without an answer, as a real server does with a bad startup packet.
 */
function serveConnection(socket: Socket, tripwires: Tripwires, log: Logger): void {
  const ip = (socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  let pending = Buffer.alloc(0);
  let parameters: Map<string, string> | null = null;
  let done = false;
  socket.setTimeout(IDLE_MS, () => socket.destroy());
  socket.on('error', () => socket.destroy());

  /** Ends the conversation (with a last message, if any); returns false to stop reading. */
  const finish = (answer?: Buffer): false => {
    done = true;
    if (answer) socket.end(answer);
    else socket.destroy();
    return false;
  };

  const step = (): boolean => {
    if (!parameters) {
      if (pending.length < 8) return false;
      const length = pending.readInt32BE(0);
      if (length < 8 || length > MAX_STARTUP_BYTES) return finish();
      if (pending.length < length) return false;
      const code = pending.readInt32BE(4);
      const body = pending.subarray(8, length);
      pending = pending.subarray(length);
      if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
        socket.write('N');
        return true;
      }
      if (code === CANCEL_REQUEST) return finish();
      if (code >> 16 !== PROTOCOL_3) {
        return finish(errorResponse('0A000', 'unsupported frontend protocol'));
      }
      parameters = parseParameters(body);
      if (!parameters) return finish();
      if (!parameters.get('user')) {
        return finish(errorResponse('28000', 'no PostgreSQL user name specified'));
      }
      socket.write(ASK_CLEARTEXT);
      return true;
    }
    if (pending.length < 5) return false;
    const length = pending.readInt32BE(1);
    if (pending[0] !== 0x70 /* 'p' */ || length < 5 || length > MAX_PASSWORD_BYTES) {
      return finish();
    }
    if (pending.length < length + 1) return false;
    const password = pending
      .subarray(5, length + 1)
      .toString('utf8')
      .replace(/\0$/, '');
    const user = parameters.get('user')!;
    done = true;
    recordPostgresLogin(tripwires, { ip, parameters, password }).then(
      () => finish(errorResponse('28P01', `password authentication failed for user "${user}"`)),
      (err: unknown) => {
        log.error({ err }, 'decoy Postgres: hit could not be handed over');
        finish(errorResponse('53300', 'sorry, too many clients already'));
      },
    );
    return false;
  };

  socket.on('data', (chunk) => {
    if (done) return;
    pending = Buffer.concat([pending, chunk]);
    while (!done && step());
  });
}

export interface PostgresListener {
  port: number;
  close(): Promise<void>;
}

/** The Postgres-wire decoy that planted database URLs point at. */
export async function startPostgresListener(deps: {
  host: string;
  port: number;
  tripwires: Tripwires;
  log: Logger;
}): Promise<PostgresListener> {
  const server = createServer((socket) => serveConnection(socket, deps.tripwires, deps.log));
  server.maxConnections = MAX_CONNECTIONS;
  server.on('error', (err) => deps.log.error({ err }, 'decoy Postgres listener error'));
  server.listen(deps.port, deps.host);
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
