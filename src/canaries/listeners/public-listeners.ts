import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../config';
import type { Logger } from '../../logger';
import { createTripwireApp, type TripwireRouteDeps } from '../tripwire.routes';
import { startDnsListener } from './dns';
import { startPostgresListener } from './postgres';
import { startDecoyMailServer } from './smtp';
import { startWireguardListener } from './wireguard';

interface Started {
  name: PublicListenerName;
  port: number;
  close(): Promise<void>;
}

export type PublicListenerName = 'mail' | 'tripwire' | 'dns' | 'postgres' | 'wireguard';

export interface PublicListeners {
  /** The port each started listener is on (a configured 0 becomes the port it got). */
  ports: Partial<Record<PublicListenerName, number>>;
  close(): Promise<void>;
}

/**
 * Every listener attackers reach, apart from the API: decoy mail always; the tripwire HTTP
 * listener, DNS, Postgres and WireGuard when their ports are set (WireGuard also needs its key).
 * All on TRIPWIRE_HOST (default HOST), so an operator can expose these and keep the API, console,
 * /metrics and /docs internal.
 */
export async function startPublicListeners(
  config: Config,
  deps: TripwireRouteDeps,
  log: Logger,
): Promise<PublicListeners> {
  const { tripwires } = deps;
  const host = config.TRIPWIRE_HOST ?? config.HOST;
  const started: Started[] = [];
  const mail = await startDecoyMailServer({ host, port: config.DECOY_SMTP_PORT, tripwires, log });
  started.push({ name: 'mail', ...mail });
  if (config.TRIPWIRE_PORT !== undefined) {
    const server = createTripwireApp(deps, config.TRUST_PROXY, log).listen(
      config.TRIPWIRE_PORT,
      host,
    );
    await once(server, 'listening');
    started.push({
      name: 'tripwire',
      port: (server.address() as AddressInfo).port,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    });
  }
  if (config.DNS_PORT !== undefined) {
    const settings = { zone: config.CANARY_DNS_DOMAIN, answerIpv4: config.DNS_ANSWER_IPV4 ?? null };
    const dns = await startDnsListener({ host, port: config.DNS_PORT, tripwires, settings, log });
    started.push({ name: 'dns', ...dns });
  }
  if (config.DECOY_POSTGRES_PORT !== undefined) {
    const pg = await startPostgresListener({
      host,
      port: config.DECOY_POSTGRES_PORT,
      tripwires,
      log,
    });
    started.push({ name: 'postgres', ...pg });
  }
  if (config.WIREGUARD_PORT !== undefined && config.WIREGUARD_PRIVATE_KEY) {
    const wireguard = await startWireguardListener({
      host,
      port: config.WIREGUARD_PORT,
      privateKey: config.WIREGUARD_PRIVATE_KEY,
      tripwires,
      log,
    });
    started.push({ name: 'wireguard', ...wireguard });
  }
  for (const { name, port } of started) log.info({ host, port }, `public ${name} listener up`);
  return {
    ports: Object.fromEntries(started.map((s) => [s.name, s.port])),
    close: async () => void (await Promise.allSettled(started.map((s) => s.close()))),
  };
}
