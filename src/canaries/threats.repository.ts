import type { Collection, Db, Filter } from 'mongodb';
import {
  bulkWriteAllowingDuplicates,
  isDuplicateKeyError,
  journaled,
  unjournaled,
  type CollectionIndexes,
} from '../db/mongo';
import { derivedTimeOrderedId } from '../ids';
import type { AlertPayload } from '../alerts/payload';
import type { HitOrigin } from '../../workflows/shared';
import type { CanaryKind } from './decoys';

/** How a canary was presented. */
export const HIT_VIAS = [
  'api_key',
  'bearer_token',
  'password',
  'login_email',
  'basic_auth',
  'aws_signature',
  'url',
  'email',
  'dns',
  'postgres',
  'aws_api',
  'kubernetes_api',
  'wireguard',
  'shield',
  'leak_report',
  'agent',
] as const;
export type HitVia = (typeof HIT_VIAS)[number];

export interface HitSource extends HitOrigin {
  via: HitVia;
}

/** One alert's worth of hits: the first hit from a source, and the ones in its storm window. */
export interface ThreatEvent {
  id: string;
  accountId: string;
  canaryId: string;
  /** `agent` for an agent alert (its agent id stands in the canary's place). */
  canaryKind: CanaryKind | 'agent';
  platform: string;
  source: HitSource;
  firstHitAt: Date;
  lastHitAt: Date;
  hitCount: number;
  /** Set when the alert is prepared: enrichment, risk and the payload that was sent. */
  alert: AlertPayload | null;
  /** How many hits that alert reported: what a storm's follow-up counts from. */
  alertHits?: number;
}

/**
 * Every single hit, sealed in an evidence record (`evidence.log_id`) that its storm's hits from
 * one source share.
 */
export interface ThreatHit {
  id: string;
  accountId: string;
  canaryId: string;
  threatEventId: string;
  at: Date;
  source: HitSource;
  requestId: string | null;
  evidence: { logId: string; seq: number; contentHash: string };
}

type EventDoc = Omit<ThreatEvent, 'id'> & {
  _id: string;
  /** When the alert was written (wall clock): what the live feed polls by. */
  alertRecordedAt?: Date;
  /** Outbox marker: set until the event's alert workflow is known to be started (reconciler). */
  alertPendingSince?: Date;
  /**
   * Outbox marker: set with a later hit's count until the storm's follow-up workflow is known to
   * be started (reconciler), so that a follow-up is never missed.
   */
  followUpPendingSince?: Date;
};
/** An event's outbox marks: a workflow the reconciler starts if the API's start is not confirmed. */
type OutboxMark = 'alertPendingSince' | 'followUpPendingSince';

type HitDoc = Omit<ThreatHit, 'id'> & {
  _id: string;
  /** When this process wrote it (not when it came in): what the live feed polls by. */
  recordedAt?: Date;
};

/** What the live feed announces: a hit written, or an event's alert prepared. */
export interface LiveItem {
  type: 'hit' | 'alert';
  /** Unique per item: the hit's id, or `alert:<threat_event_id>`. */
  key: string;
  accountId: string;
  /** When the writing process wrote it, by its wall clock. */
  recordedAt: Date;
  /** What the stream sends as the event's data. */
  data: Record<string, unknown>;
}
/**
 * Per canary and source (`_id`, the storm key): which threat event new hits join until the window
 * closes. Its `_id` is the arbiter between replicas: one storm per key is open at a time.
 */
interface StormDoc extends Storm {
  _id: string;
}

/** A storm window: the threat event its hits join, until it closes. */
export interface Storm {
  threatEventId: string;
  closesAt: Date;
}

export const threatEventsIndexes: CollectionIndexes = {
  collection: 'threat_events',
  indexes: [
    { key: { accountId: 1, firstHitAt: -1 }, name: 'account_newest_first' },
    { key: { alertPendingSince: 1 }, name: 'alert_pending', sparse: true },
    { key: { followUpPendingSince: 1 }, name: 'follow_up_pending', sparse: true },
    // The live feed's poll, across accounts (src/canaries/live-feed.ts).
    { key: { alertRecordedAt: 1 }, name: 'alert_recorded_at', sparse: true },
  ],
};
export const threatHitsIndexes: CollectionIndexes = {
  collection: 'threat_hits',
  indexes: [
    { key: { accountId: 1, at: -1 }, name: 'account_newest_first' },
    // The live feed's poll, across accounts (src/canaries/live-feed.ts).
    { key: { recordedAt: 1 }, name: 'recorded_at', sparse: true },
  ],
};
export const threatStormsIndexes: CollectionIndexes = {
  collection: 'threat_storms',
  // An erasure's lookup of its events' storm windows (their ids hold the source address).
  indexes: [{ key: { threatEventId: 1 }, name: 'threat_event' }],
};

export interface Page {
  canaryId?: string;
  since?: Date;
  until?: Date;
  /** Continue after this item (the previous page's last): ties in time are broken by id. */
  after?: { at: Date; id: string };
  limit: number;
}

export class ThreatsRepository {
  private readonly events: Collection<EventDoc>;
  private readonly hits: Collection<HitDoc>;
  /**
   * The recorder's writes that a journaled write right after makes durable with it (see
   * `unjournaled`): a storm's claim, which its event's write follows, and the hit log and events'
   * counts, which the canaries' tally follows (`Tripwires.seal`). The tripwire journal keeps a
   * hit until that last write: a database that lost them meanwhile gets them again by replay.
   */
  private readonly stormsOf: Collection<StormDoc>;
  private readonly hitLog: Collection<HitDoc>;
  private readonly eventCounts: Collection<EventDoc>;

  constructor(db: Db) {
    // Hits and events are on disk before a write is acknowledged, but for the recorder's above.
    const durable = journaled(db);
    this.events = durable.collection<EventDoc>(threatEventsIndexes.collection);
    this.hits = durable.collection<HitDoc>(threatHitsIndexes.collection);
    const followed = unjournaled(db);
    this.stormsOf = followed.collection<StormDoc>(threatStormsIndexes.collection);
    this.hitLog = followed.collection<HitDoc>(threatHitsIndexes.collection);
    this.eventCounts = followed.collection<EventDoc>(threatEventsIndexes.collection);
  }

  /**
   * Opens each key's storm at its `at` for `windowMs`, unless one is open then: the storms new hits
   * under these keys join, either way, in order. An event id is derived from the key and the
   * instant, so a replay names the same event; of two replicas opening a key's storm at once, the
   * unique `_id` lets one in and the other joins its event. One write for all the keys, made
   * durable by their events' write (`openEvents`), and one read for those found open.
   */
  async claimStorms(claims: { stormKey: string; at: Date }[], windowMs: number): Promise<Storm[]> {
    if (!claims.length) return [];
    const storms = claims.map(({ stormKey, at }) => ({
      threatEventId: stormEventId(stormKey, at),
      closesAt: new Date(at.getTime() + windowMs),
    }));
    const { duplicates: taken } = await bulkWriteAllowingDuplicates(
      this.stormsOf,
      claims.map(({ stormKey, at }, i) => ({
        updateOne: {
          filter: { _id: stormKey, closesAt: { $lte: at } },
          update: { $set: storms[i]! },
          upsert: true,
        },
      })),
    );
    if (!taken.size) return storms;
    const keys = [...taken].map((i) => claims[i]!.stormKey);
    const open = new Map(
      (await this.stormsOf.find({ _id: { $in: keys } }).toArray()).map((s) => [s._id, s]),
    );
    for (const i of taken) {
      const { stormKey, at } = claims[i]!;
      const storm = open.get(stormKey);
      // Closed again between the two: the hits fail, and their replay claims the key anew.
      if (!storm || storm.closesAt <= at) throw new Error(`storm ${stormKey} changed meanwhile`);
      storms[i] = { threatEventId: storm.threatEventId, closesAt: storm.closesAt };
    }
    return storms;
  }

  /**
   * The storms' events, each written once, in one journaled write that makes their claims durable
   * too: marked as waiting for its alert until `alertsStarted` clears the mark. True for each event
   * this call wrote; false for one that was there already (another replica's, or this hit's first
   * try before a crash). `updateMany` (each matches one event) because the driver never retries
   * it: a retry could reach a restarted database that lost the claims, and write the events
   * without them.
   */
  async openEvents(events: ThreatEvent[]): Promise<boolean[]> {
    if (!events.length) return [];
    const { result } = await bulkWriteAllowingDuplicates(
      this.events,
      events.map(({ id, ...rest }) => ({
        updateMany: {
          filter: { _id: id },
          update: { $setOnInsert: { ...rest, alertPendingSince: rest.firstHitAt } },
          upsert: true,
        },
      })),
    );
    return events.map((_, i) => i in result.upsertedIds);
  }

  /** An event with no hits (an agent alert): idempotent by its id. */
  async recordEvent(event: ThreatEvent): Promise<void> {
    const { id, ...rest } = event;
    try {
      // An agent's alert comes with its event: the live feed announces it like any other.
      await this.events.insertOne({
        _id: id,
        ...rest,
        ...(rest.alert && { alertRecordedAt: new Date() }),
      });
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
  }

  /**
   * Hits of any events, in two writes: the hit log, then each event's count and last hit. Neither
   * waits for the journal: the caller's next journaled write makes them durable (see `hitLog`).
   * The counts are `updateMany` (each matches one event) because the driver never retries it: a
   * retry could reach a restarted database that lost the hit log's write, and count hits it lacks.
   * The events in `grown` are marked as owing their storm a follow-up (`followUpsStarted` clears
   * the mark), in the same write.
   */
  async addHits(hits: ThreatHit[], grown: ReadonlySet<string> = new Set()): Promise<void> {
    if (!hits.length) return;
    // The wall clock, not the service's clock: the live feed compares it with its own.
    const recordedAt = new Date();
    await this.hitLog.insertMany(hits.map(({ id, ...rest }) => ({ _id: id, ...rest, recordedAt })));
    const events = new Map<string, { count: number; last: Date }>();
    for (const hit of hits) {
      const event = events.get(hit.threatEventId);
      if (!event) events.set(hit.threatEventId, { count: 1, last: hit.at });
      else {
        event.count++;
        if (hit.at > event.last) event.last = hit.at;
      }
    }
    await this.eventCounts.bulkWrite(
      [...events].map(([_id, { count, last }]) => ({
        updateMany: {
          filter: { _id },
          update: {
            $inc: { hitCount: count },
            $max: { lastHitAt: last },
            ...(grown.has(_id) && { $min: { followUpPendingSince: recordedAt } }),
          },
        },
      })),
    );
  }

  /** Every account's hits written at or after `since`, oldest first (the live feed's poll). */
  async hitsRecordedSince(since: Date, limit: number): Promise<LiveItem[]> {
    const docs = await this.hits
      .find(
        { recordedAt: { $gte: since } },
        { projection: { accountId: 1, threatEventId: 1, canaryId: 1, at: 1, recordedAt: 1 } },
      )
      .sort({ recordedAt: 1 })
      .limit(limit)
      .toArray();
    return docs.map((d) => ({
      type: 'hit',
      key: d._id,
      accountId: d.accountId,
      recordedAt: d.recordedAt!,
      data: {
        hit_id: d._id,
        threat_event_id: d.threatEventId,
        canary_id: d.canaryId,
        at: d.at.toISOString(),
      },
    }));
  }

  /** Every account's alerts written at or after `since`, oldest first (the live feed's poll). */
  async alertsRecordedSince(since: Date, limit: number): Promise<LiveItem[]> {
    const docs = await this.events
      .find(
        { alertRecordedAt: { $gte: since } },
        {
          projection: {
            accountId: 1,
            canaryId: 1,
            alertRecordedAt: 1,
            'alert.data.riskLevel': 1,
            'alert.data.alertLevel': 1,
          },
        },
      )
      .sort({ alertRecordedAt: 1 })
      .limit(limit)
      .toArray();
    return docs.map((d) => ({
      type: 'alert',
      key: `alert:${d._id}`,
      accountId: d.accountId,
      recordedAt: d.alertRecordedAt!,
      data: {
        threat_event_id: d._id,
        canary_id: d.canaryId,
        risk_level: d.alert?.data.riskLevel,
        alert_level: d.alert?.data.alertLevel,
      },
    }));
  }

  /** Which of these hit ids are already in the hit log (a journal replay skips them). */
  async recordedHitIds(hitIds: string[]): Promise<Set<string>> {
    const docs = await this.hits
      .find({ _id: { $in: hitIds } }, { projection: { _id: 1 } })
      .toArray();
    return new Set(docs.map((d) => d._id));
  }

  /** These events' alert workflows exist: the reconciler has nothing left to start for them. */
  alertsStarted(threatEventIds: string[]): Promise<void> {
    return this.unmark(threatEventIds, 'alertPendingSince');
  }

  /** Events whose alert start was not confirmed by `before`, oldest first. */
  pendingAlerts(before: Date, limit: number): Promise<Pick<ThreatEvent, 'id' | 'accountId'>[]> {
    return this.marked('alertPendingSince', before, limit);
  }

  /** These events' storm follow-ups exist: the reconciler has nothing left to start for them. */
  followUpsStarted(threatEventIds: string[]): Promise<void> {
    return this.unmark(threatEventIds, 'followUpPendingSince');
  }

  /** Events whose storm follow-up start was not confirmed by `before`, oldest first. */
  pendingFollowUps(before: Date, limit: number): Promise<Pick<ThreatEvent, 'id' | 'accountId'>[]> {
    return this.marked('followUpPendingSince', before, limit);
  }

  private async unmark(threatEventIds: string[], mark: OutboxMark): Promise<void> {
    await this.events.updateMany({ _id: { $in: threatEventIds } }, { $unset: { [mark]: '' } });
  }

  private async marked(mark: OutboxMark, before: Date, limit: number) {
    const docs = await this.events
      .find({ [mark]: { $lte: before } }, { projection: { accountId: 1 } })
      .sort({ [mark]: 1 })
      .limit(limit)
      .toArray();
    return docs.map((doc) => ({ id: doc._id, accountId: doc.accountId }));
  }

  async findEvent(threatEventId: string): Promise<ThreatEvent | null> {
    const doc = await this.events.findOne({ _id: threatEventId });
    return doc && { ...doc, id: doc._id };
  }

  /** Keeps the event's first alert, reporting `hits`. */
  async recordAlert(threatEventId: string, alert: AlertPayload, hits: number): Promise<void> {
    await this.events.updateOne(
      { _id: threatEventId },
      { $set: { alert, alertHits: hits, alertRecordedAt: new Date() } },
    );
  }

  /** How many hits these canaries have, without reading them. */
  async countHits(accountId: string, canaryIds: string[]): Promise<number> {
    return this.hits.countDocuments({ accountId, canaryId: { $in: canaryIds } });
  }

  /** Every hit on these canaries (a trap's or a document's evidence). */
  async hitsOf(accountId: string, canaryIds: string[]): Promise<ThreatHit[]> {
    const docs = await this.hits.find({ accountId, canaryId: { $in: canaryIds } }).toArray();
    return docs.map(({ _id, ...rest }) => ({ id: _id, ...rest }));
  }

  /** With a forced delete: the hits' log lines and the threat events they formed. */
  async removeFor(accountId: string, canaryIds: string[]): Promise<void> {
    await this.hits.deleteMany({ accountId, canaryId: { $in: canaryIds } });
    await this.events.deleteMany({ accountId, canaryId: { $in: canaryIds } });
  }

  async listEvents(accountId: string, page: Page): Promise<ThreatEvent[]> {
    const docs = await this.events
      .find(pageFilter<EventDoc>(accountId, page, 'firstHitAt'))
      .sort({ firstHitAt: -1, _id: -1 })
      .limit(page.limit)
      .toArray();
    return docs.map(({ _id, ...rest }) => ({ id: _id, ...rest }));
  }

  async listHits(accountId: string, page: Page): Promise<ThreatHit[]> {
    const docs = await this.hits
      .find(pageFilter<HitDoc>(accountId, page, 'at'))
      .sort({ at: -1, _id: -1 })
      .limit(page.limit)
      .toArray();
    return docs.map(({ _id, ...rest }) => ({ id: _id, ...rest }));
  }
}

/**
 * The storm's event, named after its storm key and the instant it opened (whichever process or
 * replay claims it gets the same id) and ordered by that instant: events, their alerts' workflow
 * ids and delivery records are written in the order storms open, next to each other in the
 * database's B-trees.
 */
export const stormEventId = (stormKey: string, at: Date): string =>
  derivedTimeOrderedId('thr', at, `${stormKey}|${at.toISOString()}`);

/** Newest first, optionally from one canary, within [since, until), after a cursor. */
function pageFilter<T>(accountId: string, page: Page, field: string): Filter<T> {
  const range = {
    ...(page.since && { $gte: page.since }),
    ...(page.until && { $lt: page.until }),
  };
  const { after } = page;
  return {
    accountId,
    ...(page.canaryId && { canaryId: page.canaryId }),
    ...(Object.keys(range).length && { [field]: range }),
    ...(after && {
      $or: [{ [field]: { $lt: after.at } }, { [field]: after.at, _id: { $lt: after.id } }],
    }),
  } as Filter<T>;
}
