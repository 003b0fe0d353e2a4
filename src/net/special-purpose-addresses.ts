import ipaddr from 'ipaddr.js';

/**
 * The IANA registries that say which addresses are not ordinary internet hosts, as data.
 *
 * - IPv4 Special-Purpose Address Registry,
 *   https://www.iana.org/assignments/iana-ipv4-special-registry/ (every entry), plus 224.0.0.0/4
 *   (Multicast) from the IPv4 Address Space registry,
 *   https://www.iana.org/assignments/ipv4-address-space/.
 * - IPv6 Special-Purpose Address Registry,
 *   https://www.iana.org/assignments/iana-ipv6-special-registry/ (every entry), inside the only
 *   block the IPv6 Address Space registry allocates as Global Unicast, 2000::/3
 *   (https://www.iana.org/assignments/ipv6-address-space/). Everything outside 2000::/3 is refused
 *   whether or not it is listed: IPv4-compatible (::/96), IPv4-mapped, NAT64, discard, unique-local,
 *   link-local, site-local, multicast, SRv6 SIDs and whatever IANA assigns there later.
 *
 * Entries marked "globally reachable" in the registries (anycast services, AS112, AMT) are refused
 * too: no alert receiver lives at them. Read on 2026-11-23.
 */
export interface SpecialBlock {
  cidr: string;
  name: string;
  rfc: string;
}

export const IPV4_SPECIAL_BLOCKS: readonly SpecialBlock[] = [
  { cidr: '0.0.0.0/8', name: '"This network"', rfc: 'RFC 791' },
  { cidr: '0.0.0.0/32', name: '"This host on this network"', rfc: 'RFC 1122' },
  { cidr: '10.0.0.0/8', name: 'Private-Use', rfc: 'RFC 1918' },
  { cidr: '100.64.0.0/10', name: 'Shared Address Space (CGNAT)', rfc: 'RFC 6598' },
  { cidr: '127.0.0.0/8', name: 'Loopback', rfc: 'RFC 1122' },
  { cidr: '169.254.0.0/16', name: 'Link Local', rfc: 'RFC 3927' },
  { cidr: '172.16.0.0/12', name: 'Private-Use', rfc: 'RFC 1918' },
  { cidr: '192.0.0.0/24', name: 'IETF Protocol Assignments', rfc: 'RFC 6890' },
  { cidr: '192.0.0.0/29', name: 'IPv4 Service Continuity Prefix', rfc: 'RFC 7335' },
  { cidr: '192.0.0.8/32', name: 'IPv4 dummy address', rfc: 'RFC 7600' },
  { cidr: '192.0.0.9/32', name: 'Port Control Protocol Anycast', rfc: 'RFC 7723' },
  { cidr: '192.0.0.10/32', name: 'Traversal Using Relays around NAT Anycast', rfc: 'RFC 8155' },
  { cidr: '192.0.0.170/32', name: 'NAT64/DNS64 Discovery', rfc: 'RFC 8880' },
  { cidr: '192.0.0.171/32', name: 'NAT64/DNS64 Discovery', rfc: 'RFC 8880' },
  { cidr: '192.0.2.0/24', name: 'Documentation (TEST-NET-1)', rfc: 'RFC 5737' },
  { cidr: '192.31.196.0/24', name: 'AS112-v4', rfc: 'RFC 7535' },
  { cidr: '192.52.193.0/24', name: 'AMT', rfc: 'RFC 7450' },
  { cidr: '192.88.99.0/24', name: 'Deprecated (6to4 Relay Anycast)', rfc: 'RFC 7526' },
  { cidr: '192.88.99.2/32', name: '6a44-relay anycast address', rfc: 'RFC 6751' },
  { cidr: '192.168.0.0/16', name: 'Private-Use', rfc: 'RFC 1918' },
  { cidr: '192.175.48.0/24', name: 'Direct Delegation AS112 Service', rfc: 'RFC 7534' },
  { cidr: '198.18.0.0/15', name: 'Benchmarking', rfc: 'RFC 2544' },
  { cidr: '198.51.100.0/24', name: 'Documentation (TEST-NET-2)', rfc: 'RFC 5737' },
  { cidr: '203.0.113.0/24', name: 'Documentation (TEST-NET-3)', rfc: 'RFC 5737' },
  { cidr: '224.0.0.0/4', name: 'Multicast', rfc: 'RFC 5771' },
  { cidr: '240.0.0.0/4', name: 'Reserved', rfc: 'RFC 1112' },
  { cidr: '255.255.255.255/32', name: 'Limited Broadcast', rfc: 'RFC 919' },
];

/** The one IPv6 block IANA allocates for global unicast; nothing outside it is accepted. */
export const IPV6_GLOBAL_UNICAST = '2000::/3';

export const IPV6_SPECIAL_BLOCKS: readonly SpecialBlock[] = [
  { cidr: '::1/128', name: 'Loopback Address', rfc: 'RFC 4291' },
  { cidr: '::/128', name: 'Unspecified Address', rfc: 'RFC 4291' },
  { cidr: '::/96', name: 'IPv4-compatible (deprecated)', rfc: 'RFC 4291' },
  { cidr: '::ffff:0:0/96', name: 'IPv4-mapped Address', rfc: 'RFC 4291' },
  { cidr: '64:ff9b::/96', name: 'IPv4-IPv6 Translation (NAT64)', rfc: 'RFC 6052' },
  { cidr: '64:ff9b:1::/48', name: 'IPv4-IPv6 Translation (local-use NAT64)', rfc: 'RFC 8215' },
  { cidr: '100::/64', name: 'Discard-Only Address Block', rfc: 'RFC 6666' },
  { cidr: '100:0:0:1::/64', name: 'Dummy IPv6 Prefix', rfc: 'RFC 9780' },
  { cidr: '2001::/23', name: 'IETF Protocol Assignments', rfc: 'RFC 2928' },
  { cidr: '2001::/32', name: 'TEREDO', rfc: 'RFC 4380' },
  { cidr: '2001:1::1/128', name: 'Port Control Protocol Anycast', rfc: 'RFC 7723' },
  { cidr: '2001:1::2/128', name: 'Traversal Using Relays around NAT Anycast', rfc: 'RFC 8155' },
  { cidr: '2001:1::3/128', name: 'DNS-SD Service Registration Protocol Anycast', rfc: 'RFC 9665' },
  { cidr: '2001:2::/48', name: 'Benchmarking', rfc: 'RFC 5180' },
  { cidr: '2001:3::/32', name: 'AMT', rfc: 'RFC 7450' },
  { cidr: '2001:4:112::/48', name: 'AS112-v6', rfc: 'RFC 7535' },
  { cidr: '2001:10::/28', name: 'Deprecated (previously ORCHID)', rfc: 'RFC 4843' },
  { cidr: '2001:20::/28', name: 'ORCHIDv2', rfc: 'RFC 7343' },
  { cidr: '2001:30::/28', name: 'Drone Remote ID Protocol Entity Tags (DETs)', rfc: 'RFC 9374' },
  { cidr: '2001:db8::/32', name: 'Documentation', rfc: 'RFC 3849' },
  { cidr: '2002::/16', name: '6to4', rfc: 'RFC 3056' },
  { cidr: '2620:4f:8000::/48', name: 'Direct Delegation AS112 Service', rfc: 'RFC 7534' },
  { cidr: '3fff::/20', name: 'Documentation', rfc: 'RFC 9637' },
  { cidr: '5f00::/16', name: 'Segment Routing (SRv6) SIDs', rfc: 'RFC 9602' },
  { cidr: 'fc00::/7', name: 'Unique-Local', rfc: 'RFC 4193' },
  { cidr: 'fe80::/10', name: 'Link-Local Unicast', rfc: 'RFC 4291' },
  { cidr: 'fec0::/10', name: 'Site-Local (deprecated)', rfc: 'RFC 3879' },
  { cidr: 'ff00::/8', name: 'Multicast', rfc: 'RFC 4291' },
];

const withRange = (b: SpecialBlock) => ({ ...b, range: ipaddr.parseCIDR(b.cidr) });
const parsedV4 = IPV4_SPECIAL_BLOCKS.map(withRange);
const parsedV6 = IPV6_SPECIAL_BLOCKS.map(withRange);
const globalUnicast = ipaddr.parseCIDR(IPV6_GLOBAL_UNICAST);

/**
 * Why an address is not a global unicast host, or undefined when it is one. The most specific
 * block is named (`::7f00:1` is "IPv4-compatible", not just "outside 2000::/3").
 */
export function whyNotGlobalUnicast(address: string): string | undefined {
  const text = canonical(address);
  if (text === undefined || !ipaddr.isValid(text)) return 'not an IP address';
  // `parse`, not `process`: an IPv4-mapped IPv6 address stays IPv6 and is refused as such.
  const ip = ipaddr.parse(text);
  const blocks = ip.kind() === 'ipv4' ? parsedV4 : parsedV6;
  const hits = blocks.filter((b) => b.range[0].kind() === ip.kind() && ip.match(b.range));
  const closest = hits.sort((a, b) => b.range[1] - a.range[1])[0];
  if (closest) return `${closest.name}, ${closest.cidr}, ${closest.rfc}`;
  if (ip.kind() === 'ipv6' && !ip.match(globalUnicast)) {
    return `outside ${IPV6_GLOBAL_UNICAST}, the only IPv6 block allocated for global unicast`;
  }
  return undefined;
}

/**
 * IPv6 text through the WHATWG URL parser (RFC 5952 form, embedded IPv4 read as RFC 4291 says:
 * ipaddr.js reads `::127.0.0.1` as IPv4-mapped), without a zone id (`%eth0`), which names an
 * interface, not an address.
 */
function canonical(address: string): string | undefined {
  if (!address.includes(':')) return address;
  try {
    return new URL(`http://[${address.replace(/%.*$/, '')}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}
