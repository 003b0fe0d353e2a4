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
node "$RELAY" "$DIR/ready" &
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
 * where its resolver's queries go is.
 */
export async function runWithCanaryDns(
  dnsPort: number,
  command: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<Ran> {
  const dir = mkdtempSync(join(tmpdir(), 'canary-dns-'));
  const child = spawn('unshare', ['--net', '--mount', 'sh', '-c', SCRIPT, 'sh', ...command], {
    env: { ...process.env, ...options.env, DIR: dir, RELAY: join(__dirname, 'dns-relay.mjs') },
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    timeout: options.timeoutMs ?? 120_000,
  });
  const link = child.stdio[3] as Socket;
  const upstream = createSocket('udp4');
  /** The namespace's client port of each query in flight, by DNS message id. */
  const asking = new Map<number, number>();
  upstream.on('message', (answer) => {
    const port = asking.get(answer.readUInt16BE(0));
    if (port === undefined) return;
    const head = Buffer.alloc(4);
    head.writeUInt16BE(answer.length);
    head.writeUInt16BE(port, 2);
    link.write(Buffer.concat([head, answer]));
  });
  let pending = Buffer.alloc(0);
  link.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 4 && pending.length >= 4 + pending.readUInt16BE(0)) {
      const query = pending.subarray(4, 4 + pending.readUInt16BE(0));
      asking.set(query.readUInt16BE(0), pending.readUInt16BE(2));
      upstream.send(query, dnsPort, '127.0.0.1');
      pending = pending.subarray(4 + query.length);
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
  upstream.close();
  link.destroy();
  return { code, stdout, stderr };
}
