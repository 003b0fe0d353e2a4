import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { REQUEST_ID_HEADER } from './request-id';

/** Node's parser codes for requests it refuses before Express sees them, and what they mean. */
const REFUSALS: Record<string, { status: number; detail: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, detail: 'headers: larger than the server accepts' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, detail: 'request: not received in time' },
  HPE_HEADERS_TIMEOUT: { status: 408, detail: 'headers: not received in time' },
};
const MALFORMED = { status: 400, detail: 'request: not valid HTTP/1.1' };

/**
 * Requests Node's HTTP parser refuses (a garbage request line, 20 KB of headers, …) get the same
 * kind of answer as every other error: JSON with a `detail`, an `X-Request-ID` and nosniff,
 * instead of Node's bare status line. Attach to every HTTP server that serves the app.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, detail } = REFUSALS[err.code ?? ''] ?? MALFORMED;
    const body = JSON.stringify({ detail });
    socket.end(
      [
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        `${REQUEST_ID_HEADER}: ${randomUUID()}`,
        'X-Content-Type-Options: nosniff',
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  });
}
