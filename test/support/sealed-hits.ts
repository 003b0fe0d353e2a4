import type { Db } from 'mongodb';

/** A `threat.hit` record as stored: the source once, then each hit it seals. */
export interface HitRecordDoc {
  _id: string;
  data: {
    canary_id: string;
    ip: unknown;
    user_agent: unknown;
    hits: { hit_id: string; at: string; request_id: string | null }[];
  };
}

/** A canary's `threat.hit` records, oldest first. */
export function hitRecords(db: Db, canaryId: string): Promise<HitRecordDoc[]> {
  return db
    .collection<HitRecordDoc>('evidence')
    .find({ kind: 'threat.hit', 'data.canary_id': canaryId })
    .sort({ seq: 1 })
    .toArray();
}

/** Every hit id a canary's records seal, sorted, once per time sealed (twice if sealed twice). */
export async function sealedHitIds(db: Db, canaryId: string): Promise<string[]> {
  const records = await hitRecords(db, canaryId);
  return records.flatMap((r) => r.data.hits.map((h) => h.hit_id)).sort();
}

/** The hits of a canary's threat log whose evidence names a record that does not list them. */
export async function misfiledHits(db: Db, canaryId: string): Promise<string[]> {
  const listed = new Set(
    (await hitRecords(db, canaryId)).flatMap((r) => r.data.hits.map((h) => `${r._id}|${h.hit_id}`)),
  );
  const hits = await db
    .collection<{ _id: string; evidence: { logId: string } }>('threat_hits')
    .find({ canaryId })
    .toArray();
  return hits.filter((h) => !listed.has(`${h.evidence.logId}|${h._id}`)).map((h) => h._id);
}
