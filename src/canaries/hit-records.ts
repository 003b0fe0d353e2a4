/**
 * How a seal's hits become `threat.hit` records: a storm's hits from one source share one
 * (tripwires.ts seals them).
 */
import type { Canary } from './canaries.repository';
import type { HitSource } from './threats.repository';

/** A hit handed to the recorder: journaled, its canary known live. */
export interface HitReport {
  id: string;
  canaryId: string;
  /** Canary and source: hits under one key within the storm window join one event. */
  stormKey: string;
  at: Date;
  source: HitSource;
  requestId: string | null;
  /** Handed over as it was answered: its id is new, so it cannot be in the hit log yet. */
  fresh: boolean;
}

/** One storm's new hits in a batch, with its live canary. */
export interface NewHits {
  stormKey: string;
  canary: Canary;
  hits: HitReport[];
}

/** ...and the event they join. */
export interface StormHits extends NewHits {
  threatEventId: string;
}

/** Hits one sealed record holds at most: a record stays a small document whatever the flood. */
export const HITS_PER_RECORD = 500;

/** One `threat.hit` record to append: its id, its data, and the storm's hits it seals. */
export interface HitRecord {
  logId: string;
  storm: StormHits;
  hits: HitReport[];
  data: object;
}

/**
 * A storm's hits as records: those from one source (address, agent, channel, relay) together, at
 * most `HITS_PER_RECORD` in one, the source once and each hit's id, time and request id listed;
 * a hit already sealed (`sealedBefore`, by hit id) goes to its record again.
 */
export function recordsFor(storm: StormHits, sealedBefore: Map<string, string>): HitRecord[] {
  const inRecords = Map.groupBy(
    storm.hits.filter((hit) => sealedBefore.has(hit.id)),
    (hit) => sealedBefore.get(hit.id)!,
  );
  const unsealed = storm.hits.filter((hit) => !sealedBefore.has(hit.id));
  for (const hits of Map.groupBy(unsealed, (hit) => JSON.stringify(hit.source)).values()) {
    for (let i = 0; i < hits.length; i += HITS_PER_RECORD) {
      const chunk = hits.slice(i, i + HITS_PER_RECORD);
      inRecords.set(hitEvidenceId(chunk[0]!.id), chunk);
    }
  }
  const { canary, threatEventId } = storm;
  return [...inRecords].map(([logId, hits]) => {
    const { source } = hits[0]!;
    const data = {
      threat_event_id: threatEventId,
      canary_id: canary.id,
      canary_kind: canary.kind,
      via: source.via,
      ip: source.ip,
      user_agent: source.userAgent,
      mail_server: source.mailServer,
      ...(source.resolver && { resolver: source.resolver }),
      hits: hits.map((h) => ({
        hit_id: h.id,
        at: h.at.toISOString(),
        request_id: h.requestId,
      })),
    };
    return { logId, storm, hits, data };
  });
}

/** The evidence record of hits: its first hit id's time-ordered part under the evidence prefix. */
const hitEvidenceId = (hitId: string): string => `evd_${hitId.replace(/^hit_/, '')}`;
