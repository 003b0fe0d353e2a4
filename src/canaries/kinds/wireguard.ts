import { generateKeyPairSync, randomInt } from 'node:crypto';
import { DomainError } from '../../errors';
import { wireguardToken } from '../listeners/wireguard';
import type { KindModule } from './kind';

/** A raw key of a JWK (base64url) as WireGuard writes keys (base64). */
const wgKey = (jwkValue: string) => Buffer.from(jwkValue, 'base64url').toString('base64');

export const wireguard: KindModule = {
  howToUse:
    'Save it where VPN configs live (a laptop’s /etc/wireguard, a password manager, an admin’s Documents, the WireGuard app’s import folder) under a name like office.conf. Connecting with it (wg-quick up, the WireGuard apps) sends a handshake to this service’s decoy WireGuard endpoint, which recognises the config’s key and fires; the tunnel never comes up, as with a server that does not know the peer. It does not fire when the endpoint is unreachable from the client (UDP blocked) or the config is only read.',
  risk: {
    base: 65,
    what: 'A decoy WireGuard VPN config',
    action:
      'Someone tried to connect with the VPN config where you left it; treat that machine or store as exposed and check your real VPN’s peers',
  },
  make: (settings) => {
    if (!settings.wireguard) {
      throw new DomainError(
        'conflict',
        'WireGuard canaries need the decoy endpoint: set WIREGUARD_PRIVATE_KEY (and WIREGUARD_PORT) on the server',
      );
    }
    const { d, x } = generateKeyPairSync('x25519').privateKey.export({ format: 'jwk' });
    const publicKey = wgKey(x!);
    const config = [
      '[Interface]',
      `PrivateKey = ${wgKey(d!)}`,
      `Address = 10.${randomInt(8, 250)}.${randomInt(0, 255)}.${randomInt(2, 250)}/32`,
      'DNS = 10.8.0.1',
      '',
      '[Peer]',
      `PublicKey = ${settings.wireguard.publicKey}`,
      'AllowedIPs = 10.0.0.0/8, 172.16.0.0/12',
      `Endpoint = ${settings.publicHost}:${settings.wireguard.port}`,
      'PersistentKeepalive = 25',
      '',
    ].join('\n');
    return {
      value: config,
      tokens: [wireguardToken(publicKey)],
      artifact: {
        filename: 'office-vpn.conf',
        contentType: 'text/plain; charset=utf-8',
        body: Buffer.from(config),
      },
    };
  },
  platform: () => 'WireGuard client',
};
