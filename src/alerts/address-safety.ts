import { lookup as dnsLookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';
import { whyNotGlobalUnicast } from '../net/special-purpose-addresses';

/**
 * Outbound address safety for alert channels, as an allowlist: a delivery may only reach an
 * address that is global unicast by the IANA registries (src/net/special-purpose-addresses.ts):
 * IPv4 outside every special-purpose block, IPv6 inside 2000::/3 and outside every special-purpose
 * block. Every resolved address must pass, at creation, at update and before every attempt. The URL
 * parser already turns decimal, hex, octal, short and IPv4-in-IPv6 spellings into one form.
 *
 * Two lists refuse addresses the registries call public: the cloud platform endpoints below, and
 * the operator's own (`OUTBOUND_DENY_CIDRS`). Both apply even where private targets are allowed.
 */
export class UnsafeTargetError extends Error {}

/**
 * The name could not be resolved this time (the resolver timed out or failed, not "no such
 * name"): refused like any unresolvable target when a channel is saved, retried like a network
 * error when an alert is sent.
 */
export class TransientLookupError extends UnsafeTargetError {}

/** getaddrinfo's "try again" and the resolver's timeout, server failure and unreachable server. */
const TRANSIENT_DNS_CODES = new Set(['EAI_AGAIN', 'ETIMEOUT', 'ESERVFAIL', 'ECONNREFUSED']);

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
  /** The operator's deny list, as CIDRs (OUTBOUND_DENY_CIDRS, validated at start). */
  deny?: readonly string[];
  lookup?: Lookup;
}

/**
 * Cloud metadata and platform endpoints at addresses IANA counts as public, so the allowlist
 * cannot know them. The other endpoints clouds document sit in special-purpose blocks and are refused
 * there: the metadata services of AWS, Google Cloud, Azure, Oracle, DigitalOcean, Hetzner and
 * OpenStack (169.254.169.254), Tencent (169.254.0.23) and Scaleway (169.254.42.42) are link-local,
 * Alibaba's (100.100.100.200) is shared address space, Oracle's older 192.0.0.192 is in the IETF
 * protocol block, and the IPv6 ones (AWS fd00:ec2::254, Google fd20:ce::254, Scaleway fd00:42::42)
 * are unique-local.
 */
export const CLOUD_PLATFORM_BLOCKS: readonly { cidr: string; name: string; source: string }[] = [
  {
    cidr: '168.63.129.16/32',
    name: 'Azure platform endpoint (WireServer: VM agent, DNS, DHCP, health probes)',
    source: 'https://learn.microsoft.com/azure/virtual-network/what-is-ip-address-168-63-129-16',
  },
  {
    cidr: '161.26.0.0/16',
    name: 'IBM Cloud service network (its private DNS resolvers 161.26.0.7 and 161.26.0.8)',
    source: 'https://cloud.ibm.com/docs/dns-svcs?topic=dns-svcs-managing-permitted-networks',
  },
];

/**
 * Each block parsed once: every delivery checks its address against all of them, and parsing
 * them each time was most of that check. Keys are the operator's deny list and the list above.
 */
const parsedBlocks = new Map<string, [ipaddr.IPv4 | ipaddr.IPv6, number]>();

function parsedBlock(cidr: string): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  let block = parsedBlocks.get(cidr);
  if (!block) parsedBlocks.set(cidr, (block = ipaddr.parseCIDR(cidr)));
  return block;
}

/** Why the operator's deny list or the cloud platform list refuses `address`, if either does. */
export function whyDenied(address: string, deny: readonly string[] = []): string | undefined {
  const ip = ipaddr.process(address);
  const inBlock = (cidr: string) => {
    const [range, bits] = parsedBlock(cidr);
    return range.kind() === ip.kind() && ip.match(range, bits);
  };
  const platform = CLOUD_PLATFORM_BLOCKS.find((block) => inBlock(block.cidr));
  if (platform) return `a cloud platform endpoint: ${platform.name}`;
  const denied = deny.find(inBlock);
  if (denied) return `in ${denied}, which OUTBOUND_DENY_CIDRS refuses`;
  return undefined;
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
    : await (policy.lookup ?? systemLookup)(host).catch((err: unknown) => {
        const code = (err as { code?: unknown }).code;
        if (typeof code === 'string' && TRANSIENT_DNS_CODES.has(code)) {
          throw new TransientLookupError(`host ${host} did not resolve this time (${code})`);
        }
        throw new UnsafeTargetError(`host ${host} does not resolve`);
      });
  if (!addresses.length) throw new UnsafeTargetError(`host ${host} does not resolve`);
  // Every answer must be safe: a name with one public and one private record is refused.
  for (const { address } of addresses) {
    const denied = whyDenied(address, policy.deny);
    if (denied) throw new UnsafeTargetError(`resolves to ${address}, ${denied}`);
    const why = policy.allowPrivate ? undefined : whyNotGlobalUnicast(address);
    if (why) {
      throw new UnsafeTargetError(`resolves to ${address}, which is not a public address (${why})`);
    }
  }
  const chosen = addresses[0]!;
  return { url, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
