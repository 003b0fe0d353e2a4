import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/**
 * Outbound address safety for alert channels: a delivery may only reach a public unicast address,
 * never loopback, private, link-local (cloud metadata), unique-local, CGNAT, multicast, unspecified
 * or reserved ranges, nor an IPv4 address wrapped in an IPv6 form (mapped, NAT64, 6to4, Teredo).
 * The URL parser already turns decimal, hex, octal and short IPv4 spellings into dotted quads.
 */
export class UnsafeTargetError extends Error {}

export type Lookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

export interface SafeTarget {
  url: URL;
  /** The address that was checked: deliveries connect to it, so DNS cannot change in between. */
  address: string;
  family: 4 | 6;
}

export interface TargetPolicy {
  requireHttps: boolean;
  /** Development and tests only (ALLOW_PRIVATE_WEBHOOK_TARGETS). */
  allowPrivate: boolean;
  lookup?: Lookup;
}

const systemLookup: Lookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export function isPublicUnicast(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.parse(address).range() === 'unicast';
}

export async function resolveSafeTarget(raw: string, policy: TargetPolicy): Promise<SafeTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeTargetError('not a valid URL');
  }
  if (url.protocol !== 'https:' && (policy.requireHttps || url.protocol !== 'http:')) {
    throw new UnsafeTargetError(
      policy.requireHttps ? 'must use https://' : 'must use http:// or https://',
    );
  }
  if (url.username || url.password)
    throw new UnsafeTargetError('must not carry a user name or password');

  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = ipaddr.isValid(host)
    ? [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }]
    : await (policy.lookup ?? systemLookup)(host).catch(() => {
        throw new UnsafeTargetError(`host ${host} does not resolve`);
      });
  if (!addresses.length) throw new UnsafeTargetError(`host ${host} does not resolve`);
  // Every answer must be safe: a name with one public and one private record is refused.
  const unsafe = addresses.find((a) => !isPublicUnicast(a.address));
  if (unsafe && !policy.allowPrivate) {
    throw new UnsafeTargetError(`resolves to ${unsafe.address}, which is not a public address`);
  }
  const chosen = addresses[0]!;
  return { url, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
