import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { Logger } from '../../logger';
import { dnsToken } from '../decoys';
import type { Tripwires } from '../tripwires';

const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;
const TTL_SECONDS = 60;
/** A TCP client that sends nothing for this long is dropped (RFC 7766 suggests seconds). */
const TCP_IDLE_MS = 10_000;
const MAX_TCP_CONNECTIONS = 256;

export interface DnsSettings {
  /** The delegated zone, e.g. `canary.example.com`. */
  zone: string;
  /** The A record every name in the zone gets; null: every name but the apex is NXDOMAIN. */
  answerIpv4: string | null;
}

/**
 * Answers one DNS message as the zone's authoritative server; null when it deserves no answer
 * (undecodable, or itself a response). A lookup of `<token>.<zone>` (or any name below it) fires
 * the canary, with the asking resolver recorded as the relay: DNS never tells us the attacker. Live
 * and unknown names get the same answer. The answer goes out only once the hit is handed over.
 */
export async function answerDnsQuery(
  deps: { tripwires: Tripwires; settings: DnsSettings; log: Logger },
  message: Buffer,
  resolverIp: string,
): Promise<Buffer | null> {
  let query: dnsPacket.DecodedPacket;
  try {
    query = dnsPacket.decode(message);
  } catch {
    return null;
  }
  if (query.type === 'response') return null;
  const reply = (rcode: number, answers: dnsPacket.Answer[] = [], authority = false) =>
    dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (query.flags! & dnsPacket.RECURSION_DESIRED) | rcode,
      questions: query.questions,
      answers,
      authorities: authority ? [soa(deps.settings.zone)] : [],
    });
  const [question] = query.questions ?? [];
  if (query.questions?.length !== 1 || !question) return reply(RCODE.FORMERR);
  if ((query.flags! >> 11) & 0xf) return reply(RCODE.NOTIMP);

  const name = question.name.toLowerCase().replace(/\.$/, '');
  const { zone, answerIpv4 } = deps.settings;
  if (name !== zone && !name.endsWith(`.${zone}`)) return reply(RCODE.REFUSED);
  if (name === zone) {
    return question.type === 'SOA' ? reply(RCODE.NOERROR, [soa(zone)]) : reply(0, [], true);
  }
  const label = name
    .slice(0, -zone.length - 1)
    .split('.')
    .at(-1)!;
  try {
    await deps.tripwires.recordHit({
      secrets: [dnsToken(label)],
      via: 'dns',
      client: { ip: '', userAgent: '' },
      resolver: { ip: resolverIp, name: name.slice(0, 253), type: String(question.type) },
    });
  } catch (err) {
    // The resolver will ask again; the hit is not lost for good.
    deps.log.error({ err, name }, 'DNS canary: hit could not be handed over');
    return reply(RCODE.SERVFAIL);
  }
  if (!answerIpv4) return reply(RCODE.NXDOMAIN, [], true);
  if (question.type !== 'A') return reply(RCODE.NOERROR, [], true);
  return reply(RCODE.NOERROR, [
    { type: 'A', name: question.name, ttl: TTL_SECONDS, data: answerIpv4 },
  ]);
}

/** The zone's SOA, so resolvers cache negative answers only briefly. */
function soa(zone: string): dnsPacket.Answer {
  return {
    type: 'SOA',
    name: zone,
    ttl: TTL_SECONDS,
    data: {
      mname: `ns.${zone}`,
      rname: `hostmaster.${zone}`,
      serial: 1,
      refresh: 3600,
      retry: 600,
      expire: 86_400,
      minimum: TTL_SECONDS,
    },
  };
}

export interface DnsListener {
  port: number;
  close(): Promise<void>;
}

/** The authoritative listener on UDP and TCP (one port number for both, as DNS expects). */
export async function startDnsListener(deps: {
  host: string;
  port: number;
  tripwires: Tripwires;
  settings: DnsSettings;
  log: Logger;
}): Promise<DnsListener> {
  const { log } = deps;
  const plain = (ip: string) => ip.replace(/^::ffff:/, '');
  const udp: UdpSocket = createSocket(deps.host.includes(':') ? 'udp6' : 'udp4');
  udp.on('message', (message, remote) => {
    void answerDnsQuery(deps, message, plain(remote.address)).then((answer) => {
      if (answer) udp.send(answer, remote.port, remote.address);
    });
  });
  udp.on('error', (err) => log.error({ err }, 'DNS listener (UDP) error'));

  const tcp = createServer((socket) => serveTcp(socket, deps));
  tcp.maxConnections = MAX_TCP_CONNECTIONS;
  tcp.on('error', (err) => log.error({ err }, 'DNS listener (TCP) error'));
  tcp.listen(deps.port, deps.host);
  await once(tcp, 'listening');
  const { port } = tcp.address() as AddressInfo;
  udp.bind(port, deps.host);
  await once(udp, 'listening');
  return {
    port,
    close: async () => {
      udp.close();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

/** DNS over TCP: messages each preceded by a two-byte length, answered in turn. */
function serveTcp(
  socket: Socket,
  deps: { tripwires: Tripwires; settings: DnsSettings; log: Logger },
): void {
  const resolverIp = (socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  let pending = Buffer.alloc(0);
  let busy = Promise.resolve();
  socket.setTimeout(TCP_IDLE_MS, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
      const message = pending.subarray(2, 2 + pending.readUInt16BE(0));
      pending = pending.subarray(2 + message.length);
      busy = busy.then(async () => {
        const answer = await answerDnsQuery(deps, message, resolverIp);
        // Garbage ends the conversation: a real client never sends it.
        if (!answer) return void socket.destroy();
        if (socket.writable) socket.write(Buffer.concat([lengthPrefix(answer.length), answer]));
      });
    }
  });
}

function lengthPrefix(length: number): Buffer {
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16BE(length);
  return prefix;
}
