import type * as GeoipLite from 'geoip-lite';
import ipaddr from 'ipaddr.js';
import { LRUCache } from 'lru-cache';
import { request } from 'undici';
import { z } from 'zod';
import cloudRanges from './ip-data/cloud-ranges.json';
import torExits from './ip-data/tor-exits.json';

/**
 * Offline enrichment of the address that tripped a canary: where it is (bundled GeoLite2 data in
 * geoip-lite), who runs it (published cloud ranges in ip-data/) and, only when an AbuseIPDB key is
 * configured, its abuse reputation. See ip-data/README.md for the data's sources and refresh.
 */

/**
 * - datacenter: in a cloud provider's published ranges (ip-data/cloud-ranges.json); org names it.
 * - tor: listed in ip-data/tor-exits.json, which ships empty: set only once that list is filled.
 * - internal: loopback, private, link-local, CGNAT, unique-local or unspecified.
 * - unknown: anything else, including invalid input. Not "residential": the data cannot tell.
 */
export const ATTACKER_TYPES = ['datacenter', 'tor', 'internal', 'unknown'] as const;
export type AttackerType = (typeof ATTACKER_TYPES)[number];

export interface IpEnrichment {
  /** Normalised address (IPv4-mapped IPv6 becomes plain IPv4); the input as given when invalid. */
  ip: string;
  /** ISO 3166-1 alpha-2 code, '' when unknown. */
  country: string;
  city: string;
  /** The cloud provider for datacenter addresses, '' otherwise. */
  org: string;
  type: AttackerType;
  /** AbuseIPDB confidence of abuse, 0-100; null when not configured or not answered. */
  abuseScore: number | null;
}

export interface EnricherOptions {
  /** AbuseIPDB API key; when unset abuseScore is always null and nothing is sent anywhere. */
  abuseIpdbKey?: string;
  /** Default https://api.abuseipdb.com — tests point it at a local server. */
  abuseIpdbBaseUrl?: string;
  /** Per-lookup timeout for the reputation call, default 2000 ms. */
  timeoutMs?: number;
}

const INTERNAL_RANGES = new Set([
  'unspecified',
  'loopback',
  'private',
  'linkLocal',
  'carrierGradeNat',
  'uniqueLocal',
]);

const abuseCheckAnswer = z.object({
  data: z.object({ abuseConfidenceScore: z.number().int().min(0).max(100) }),
});

/** Strict forms only: ipaddr.js alone would also take "127.1" or "0x7f000001". */
function parseAddress(raw: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const text = raw.trim();
  if (!ipaddr.IPv4.isValidFourPartDecimal(text) && !ipaddr.IPv6.isValid(text)) return null;
  // process() unwraps ::ffff:a.b.c.d, which is how a dual-stack socket reports an IPv4 peer.
  return ipaddr.process(text);
}

let geoip: typeof GeoipLite | null | undefined;

/**
 * geoip-lite reads its whole database synchronously as soon as it is required (~110 MB of RSS and
 * 0.1-0.5 s with the event loop blocked), so it is required on the first enrichment rather than at
 * import: only a process that enriches pays for it. A failed load is remembered and leaves
 * country and city ''.
 */
function geoDatabase(): typeof GeoipLite | null {
  if (geoip === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy, see above
      geoip = require('geoip-lite') as typeof GeoipLite;
    } catch {
      geoip = null;
    }
  }
  return geoip;
}

let providers: Record<string, [ipaddr.IPv4 | ipaddr.IPv6, number][]> | undefined;

/** The provider whose published ranges hold the address, '' when none does. Parsed on first use. */
function cloudProvider(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  providers ??= Object.fromEntries(
    Object.entries(cloudRanges).map(([name, cidrs]) => [
      name,
      cidrs.map((c) => ipaddr.parseCIDR(c)),
    ]),
  );
  return ipaddr.subnetMatch(address, providers, '');
}

const torExitList: readonly string[] = torExits;
const TOR_EXITS: ReadonlySet<string> = new Set(
  torExitList.map((ip) => ipaddr.process(ip).toString()),
);

function blank(ip: string, type: AttackerType): IpEnrichment {
  return { ip, country: '', city: '', org: '', type, abuseScore: null };
}

export class IpEnricher {
  private readonly key: string | undefined;
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly scores = new LRUCache<string, number>({ max: 10_000, ttl: 60 * 60 * 1000 });

  constructor(options: EnricherOptions = {}) {
    this.key = options.abuseIpdbKey || undefined;
    this.baseUrl = options.abuseIpdbBaseUrl ?? 'https://api.abuseipdb.com';
    this.timeoutMs = options.timeoutMs ?? 2000;
  }

  /**
   * Never throws and never takes much longer than timeoutMs: every failure leaves a field empty
   * ('' / 'unknown' / null).
   */
  async enrich(input: string): Promise<IpEnrichment> {
    const address = parseAddress(input);
    if (!address) return blank(input, 'unknown');

    const ip = address.toString();
    const range = address.range();
    if (INTERNAL_RANGES.has(range)) return blank(ip, 'internal');
    // Multicast, documentation, 6to4 and the like: nothing to look up, nobody to ask.
    if (range !== 'unicast') return blank(ip, 'unknown');

    let geo: GeoipLite.Lookup | null = null;
    try {
      geo = geoDatabase()?.lookup(ip) ?? null;
    } catch {
      // A lookup bug must not cost the alert its other fields.
    }
    const org = cloudProvider(address);
    const type = TOR_EXITS.has(ip) ? 'tor' : org ? 'datacenter' : 'unknown';
    return {
      ip,
      country: geo?.country ?? '',
      city: geo?.city ?? '',
      org,
      type,
      abuseScore: await this.abuseScore(ip),
    };
  }

  /** AbuseIPDB v2 check; only answers are cached, so a failure is retried on the next alert. */
  private async abuseScore(ip: string): Promise<number | null> {
    if (!this.key) return null;
    const cached = this.scores.get(ip);
    if (cached !== undefined) return cached;

    try {
      const url = new URL('/api/v2/check', this.baseUrl);
      url.searchParams.set('ipAddress', ip);
      url.searchParams.set('maxAgeInDays', '90');
      // The signal bounds the whole exchange, body included.
      const response = await request(url, {
        headers: { Key: this.key, Accept: 'application/json' },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (response.statusCode < 200 || response.statusCode >= 300) {
        await response.body.dump();
        return null;
      }
      const parsed = abuseCheckAnswer.safeParse(await response.body.json());
      if (!parsed.success) return null;
      const score = parsed.data.data.abuseConfidenceScore;
      this.scores.set(ip, score);
      return score;
    } catch {
      return null;
    }
  }
}
