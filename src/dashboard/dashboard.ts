import type { Db, Document } from 'mongodb';
import type { ChannelsRepository } from '../alerts/channels.repository';
import { deliveriesIndexes } from '../alerts/deliveries.repository';
import { threatEventsIndexes, threatHitsIndexes } from '../canaries/threats.repository';

const DAY_MS = 86_400_000;
const TOP_CANARIES = 10;

export interface Count {
  key: string;
  count: number;
}

export interface ChannelHealth {
  channelId: string;
  name: string;
  kind: string;
  disabled: boolean;
  /** The last thing that happened on it was a delivery, not an error (or nothing yet). */
  healthy: boolean;
  lastDeliveryAt: Date | null;
  lastErrorAt: Date | null;
  lastError: string | null;
}

export interface DashboardFigures {
  since: Date;
  hitsByDay: Count[];
  eventsByLevel: Count[];
  topCanaries: Count[];
  sourcesByCountry: Count[];
  deliveriesByOutcome: Count[];
  channelHealth: ChannelHealth[];
}

/** `$group` by an expression, counted, most first (ties by key), keys as strings. */
const countBy = (key: unknown, limit?: number): Document[] => [
  { $group: { _id: key, count: { $sum: 1 } } },
  { $sort: { count: -1, _id: 1 } },
  ...(limit ? [{ $limit: limit }] : []),
];

const counts = (rows: Document[]): Count[] =>
  rows.map((row) => ({ key: String(row._id ?? 'unknown'), count: Number(row.count) }));

/**
 * The console overview's figures over the last `days` days, each an aggregation whose `$match`
 * opens with the account and a time bound on an index (`account_newest_first` on hits and events,
 * `channel_newest_first` on deliveries), so a figure reads only the window's entries of one account.
 */
export class Dashboard {
  constructor(
    private readonly db: Db,
    private readonly channels: ChannelsRepository,
  ) {}

  async figures(accountId: string, days: number, now: Date): Promise<DashboardFigures> {
    // Whole UTC days: the first is today minus days-1, so `days=1` is today.
    const since = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - (days - 1) * DAY_MS);
    return this.since(accountId, since);
  }

  /** The same figures from `since` on (the weekly digest's week). */
  async since(accountId: string, since: Date): Promise<DashboardFigures> {
    const hits = this.db.collection(threatHitsIndexes.collection);
    const events = this.db.collection(threatEventsIndexes.collection);
    const deliveries = this.db.collection(deliveriesIndexes.collection);
    const inWindow = (field: string) => ({ $match: { accountId, [field]: { $gte: since } } });
    const [hitsByDay, topCanaries, eventsByLevel, sourcesByCountry, deliveriesByOutcome, channels] =
      await Promise.all([
        hits
          .aggregate([
            inWindow('at'),
            {
              $group: {
                _id: { $dateToString: { format: '%Y-%m-%d', date: '$at' } },
                count: { $sum: 1 },
              },
            },
            { $sort: { _id: 1 } },
          ])
          .toArray(),
        hits.aggregate([inWindow('at'), ...countBy('$canaryId', TOP_CANARIES)]).toArray(),
        events.aggregate([inWindow('firstHitAt'), ...countBy('$alert.data.alertLevel')]).toArray(),
        events
          .aggregate([inWindow('firstHitAt'), ...countBy('$alert.data.attacker.country')])
          .toArray(),
        deliveries.aggregate([inWindow('createdAt'), ...countBy('$outcome')]).toArray(),
        this.channels.list(accountId),
      ]);
    return {
      since,
      hitsByDay: counts(hitsByDay),
      topCanaries: counts(topCanaries),
      // An event whose alert is not prepared yet has no level; a delivery still running, no outcome.
      eventsByLevel: counts(eventsByLevel).map((c) =>
        c.key === 'unknown' ? { ...c, key: 'pending' } : c,
      ),
      sourcesByCountry: counts(sourcesByCountry).map((c) =>
        c.key === '' ? { ...c, key: 'unknown' } : c,
      ),
      deliveriesByOutcome: counts(deliveriesByOutcome).map((c) =>
        c.key === 'unknown' ? { ...c, key: 'in_progress' } : c,
      ),
      channelHealth: channels.map((channel) => ({
        channelId: channel.id,
        name: channel.name,
        kind: channel.kind,
        disabled: channel.disabled,
        healthy:
          !channel.lastError ||
          (channel.lastDeliveryAt !== null && channel.lastDeliveryAt > channel.lastError.at),
        lastDeliveryAt: channel.lastDeliveryAt,
        lastErrorAt: channel.lastError?.at ?? null,
        lastError: channel.lastError?.message ?? null,
      })),
    };
  }
}
