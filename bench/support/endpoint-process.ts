/**
 * A customer's webhook endpoint in a process of its own: HTTPS on a free loopback port with the
 * benchmark's throw-away certificate (`TEST_TLS_CERT`, `TEST_TLS_KEY`), answering 200 to every
 * request once its body is read. It prints its port on its first line. A benchmark that counts
 * CPU by process keeps the endpoint's work out of what it charges to the service.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';

const server = createServer(
  { cert: readFileSync(process.env.TEST_TLS_CERT!), key: readFileSync(process.env.TEST_TLS_KEY!) },
  (req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  },
);
server.listen(0, '127.0.0.1', () => {
  console.log(String((server.address() as AddressInfo).port));
});
