import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { whyNotGlobalUnicast } from '../net/special-purpose-addresses';

/**
 * Outbound address safety for alert channels, as an allowlist: a delivery may only reach an
 * address that is global unicast by the IANA registries (src/net/special-purpose-addresses.ts):
 * IPv4 outside every special-purpose block, IPv6 inside 2000::/3 and outside every special-purpose
 * block. Every resolved address must pass, at creation, at update and before every attempt. The URL
 * parser already turns decimal, hex, octal, short and IPv4-in-IPv6 spellings into one form.
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
  return whyNotGlobalUnicast(address) === undefined;
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
  for (const { address } of policy.allowPrivate ? [] : addresses) {
    const why = whyNotGlobalUnicast(address);
    if (why) {
      throw new UnsafeTargetError(`resolves to ${address}, which is not a public address (${why})`);
    }
  }
  const chosen = addresses[0]!;
  return { url, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
