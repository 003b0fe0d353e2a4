// Runs inside the test's network namespace (test/support/canary-dns.ts): answers the given UDP
// ports of that namespace's loopback by passing each datagram, framed, over fd 3 to the test
// process, which sends it on to the listener under test and returns any answer the same way.
// Arguments: the file to create once listening, then the ports.
import { Buffer } from 'node:buffer';
import { createSocket } from 'node:dgram';
import { writeFileSync } from 'node:fs';
import { Socket } from 'node:net';

const [ready, ...ports] = process.argv.slice(2);
const link = new Socket({ fd: 3, readable: true, writable: true });
const sockets = new Map();
let listening = 0;
for (const port of ports.map(Number)) {
  const udp = createSocket('udp4');
  udp.on('message', (message, remote) => {
    const head = Buffer.alloc(6);
    head.writeUInt16BE(message.length);
    head.writeUInt16BE(port, 2);
    head.writeUInt16BE(remote.port, 4);
    link.write(Buffer.concat([head, message]));
  });
  sockets.set(port, udp);
  udp.bind(port, '127.0.0.1', () => {
    if (++listening === ports.length) writeFileSync(ready, 'ready');
  });
}
let pending = Buffer.alloc(0);
link.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  while (pending.length >= 6 && pending.length >= 6 + pending.readUInt16BE(0)) {
    const length = pending.readUInt16BE(0);
    const udp = sockets.get(pending.readUInt16BE(2));
    udp?.send(pending.subarray(6, 6 + length), pending.readUInt16BE(4), '127.0.0.1');
    pending = pending.subarray(6 + length);
  }
});
link.on('end', () => process.exit(0));
