import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';

/**
 * The namespace's set-up: its own loopback, a resolv.conf naming it, the relay on its port 53
 * (nothing of the machine's own port 53 is touched), then the command.
 */
const SCRIPT = `
set -u
ip link set lo up
# An address besides 127/8, so resolvers that ask only for configured families (getaddrinfo
# with AI_ADDRCONFIG) still ask.
ip addr add 10.255.255.1/32 dev lo
printf 'nameserver 127.0.0.1\\noptions attempts:2 timeout:2\\n' > "$DIR/resolv.conf"
mount --bind "$DIR/resolv.conf" /etc/resolv.conf
node "$RELAY" "$DIR/ready" 53 $UDP_PORTS &
relay=$!
while [ ! -e "$DIR/ready" ]; do sleep 0.05; done
"$@"
status=$?
kill $relay
exit $status
`;

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a real client whose every DNS lookup, through the ordinary system resolver, reaches the DNS
 * listener under test: in a network and mount namespace of its own (root, `unshare`) whose
 * resolv.conf names a relay that hands each query to this process. The client is unchanged; only
 * where its resolver's queries go is. `udpPorts` are relayed the same way, each to the same port
 * of this machine's loopback (a decoy UDP listener the client connects to at 127.0.0.1).
 */
export async function runWithCanaryDns(
  dnsPort: number,
  command: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; udpPorts?: number[] } = {},
): Promise<Ran> {
  const dir = mkdtempSync(join(tmpdir(), 'canary-dns-'));
  const child = spawn('unshare', ['--net', '--mount', 'sh', '-c', SCRIPT, 'sh', ...command], {
    env: {
      ...process.env,
      ...options.env,
      DIR: dir,
      RELAY: join(__dirname, 'dns-relay.mjs'),
      UDP_PORTS: (options.udpPorts ?? []).join(' '),
    },
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    timeout: options.timeoutMs ?? 120_000,
  });
  const link = child.stdio[3] as Socket;
  /** One socket per namespace port and client port, so answers find their way back. */
  const upstreams = new Map<string, ReturnType<typeof createSocket>>();
  const upstreamFor = (local: number, client: number) => {
    const key = `${local}:${client}`;
    let socket = upstreams.get(key);
    if (!socket) {
      socket = createSocket('udp4');
      socket.on('message', (answer) => {
        const head = Buffer.alloc(6);
        head.writeUInt16BE(answer.length);
        head.writeUInt16BE(local, 2);
        head.writeUInt16BE(client, 4);
        link.write(Buffer.concat([head, answer]));
      });
      upstreams.set(key, socket);
    }
    return socket;
  };
  let pending = Buffer.alloc(0);
  link.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 6 && pending.length >= 6 + pending.readUInt16BE(0)) {
      const datagram = pending.subarray(6, 6 + pending.readUInt16BE(0));
      const local = pending.readUInt16BE(2);
      upstreamFor(local, pending.readUInt16BE(4)).send(
        datagram,
        local === 53 ? dnsPort : local,
        '127.0.0.1',
      );
      pending = pending.subarray(6 + datagram.length);
    }
  });
  link.on('error', () => undefined);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  for (const socket of upstreams.values()) socket.close();
  link.destroy();
  return { code, stdout, stderr };
}
