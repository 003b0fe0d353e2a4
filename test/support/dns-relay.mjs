// Runs inside the test's network namespace (test/support/canary-dns.ts): answers UDP port 53 of
// that namespace's loopback by passing each query, framed, over fd 3 to the test process, which
// asks the DNS listener under test and sends the answer back the same way.
import { Buffer } from 'node:buffer';
import { createSocket } from 'node:dgram';
import { writeFileSync } from 'node:fs';
import { Socket } from 'node:net';

const link = new Socket({ fd: 3, readable: true, writable: true });
const udp = createSocket('udp4');
udp.on('message', (message, remote) => {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(message.length);
  head.writeUInt16BE(remote.port, 2);
  link.write(Buffer.concat([head, message]));
});
let pending = Buffer.alloc(0);
link.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  while (pending.length >= 4 && pending.length >= 4 + pending.readUInt16BE(0)) {
    const length = pending.readUInt16BE(0);
    udp.send(pending.subarray(4, 4 + length), pending.readUInt16BE(2), '127.0.0.1');
    pending = pending.subarray(4 + length);
  }
});
link.on('end', () => process.exit(0));
udp.bind(53, '127.0.0.1', () => writeFileSync(process.argv[2], 'ready'));
