import { readFileSync } from 'node:fs';

/** Who announces an address: its autonomous system's number and organisation. */
export interface AutonomousSystem {
  asn: number;
  org: string;
}

/**
 * The ip-location-db ASN table (`@ip-location-db/asn`: RouteViews, the five RIRs and DB-IP's
 * IP-to-ASN Lite, CC BY 4.0), read from its numeric CSV files: `start,end,asn,org` per row, sorted,
 * ranges inclusive and disjoint. The package ships CSV only (no MMDB build is published for it),
 * so the rows are kept in typed arrays and searched by bisection.
 */
export class AsnTable<N extends number | bigint> {
  private constructor(
    private readonly starts: ArrayLike<N>,
    private readonly ends: ArrayLike<N>,
    private readonly asns: Uint32Array,
    private readonly orgIndex: Uint32Array,
    private readonly orgs: string[],
  ) {}

  static load<N extends number | bigint>(file: string, parse: (text: string) => N): AsnTable<N> {
    const lines = readFileSync(file, 'utf8').split('\n');
    const starts: N[] = [];
    const ends: N[] = [];
    const asns: number[] = [];
    const orgIds: number[] = [];
    const orgs: string[] = [];
    const orgIdOf = new Map<string, number>();
    for (const line of lines) {
      const match = /^(\d+),(\d+),(\d+),(.*)$/.exec(line.trimEnd());
      if (!match) continue;
      const org = unquote(match[4]!);
      let id = orgIdOf.get(org);
      if (id === undefined) orgIdOf.set(org, (id = orgs.push(org) - 1));
      starts.push(parse(match[1]!));
      ends.push(parse(match[2]!));
      asns.push(Number(match[3]));
      orgIds.push(id);
    }
    // IPv4 numbers go in typed arrays (a plain array would box each one above 2^31).
    const pack = (xs: N[]) =>
      (typeof xs[0] === 'number' ? Float64Array.from(xs as number[]) : xs) as ArrayLike<N>;
    return new AsnTable(
      pack(starts),
      pack(ends),
      Uint32Array.from(asns),
      Uint32Array.from(orgIds),
      orgs,
    );
  }

  get size(): number {
    return this.starts.length;
  }

  lookup(address: N): AutonomousSystem | null {
    let low = 0;
    let high = this.starts.length - 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      if (this.starts[mid]! > address) high = mid - 1;
      else if (this.ends[mid]! < address) low = mid + 1;
      else return { asn: this.asns[mid]!, org: this.orgs[this.orgIndex[mid]!]! };
    }
    return null;
  }
}

/** A CSV field: `"LLC ""SPUTNIK"""` is `LLC "SPUTNIK"`. */
function unquote(field: string): string {
  return field.startsWith('"') && field.endsWith('"')
    ? field.slice(1, -1).replace(/""/g, '"')
    : field;
}
