import type { Db } from 'mongodb';
import { deliveriesIndexes } from '../alerts/deliveries.repository';
import {
  WEEKLY_DIGEST_EVENT,
  weeklyDigestPayloadSchema,
  type WeeklyDigestPayload,
} from '../alerts/payload';
import type { CanariesRepository } from '../canaries/canaries.repository';
import { threatHitsIndexes } from '../canaries/threats.repository';
import type { Dashboard } from '../dashboard/dashboard';
import type { WeeklySettings } from './weekly-settings.repository';

const WEEK_MS = 7 * 86_400_000;

/**
 * An account's weekly digest over the seven days before `now`. The sources, deliveries and
 * channel health are the dashboard's figures over that window; hits by canary and day (in the
 * account's time zone) and the failed deliveries per channel are one aggregation each, every
 * `$match` opening with the account and the window's start on an account index.
 */
export class WeeklyDigests {
  constructor(
    private readonly db: Db,
    private readonly dashboard: Dashboard,
    private readonly canaries: CanariesRepository,
  ) {}

  async compose(
    accountId: string,
    { timeZone }: Pick<WeeklySettings, 'timeZone'>,
    now: Date,
  ): Promise<WeeklyDigestPayload> {
    const from = new Date(now.getTime() - WEEK_MS);
    const [figures, byCanaryAndDay, failedByChannel] = await Promise.all([
      this.dashboard.since(accountId, from),
      this.db
        .collection(threatHitsIndexes.collection)
        .aggregate<{ _id: { canaryId: string; day: string }; count: number }>([
          { $match: { accountId, at: { $gte: from, $lt: now } } },
          {
            $group: {
              _id: {
                canaryId: '$canaryId',
                day: { $dateToString: { format: '%Y-%m-%d', date: '$at', timezone: timeZone } },
              },
              count: { $sum: 1 },
            },
          },
        ])
        .toArray(),
      this.db
        .collection(deliveriesIndexes.collection)
        .aggregate<{ _id: string; count: number }>([
          { $match: { accountId, createdAt: { $gte: from }, outcome: 'failed' } },
          { $group: { _id: '$channelId', count: { $sum: 1 } } },
        ])
        .toArray(),
    ]);

    const perCanary = new Map<string, { key: string; count: number }[]>();
    for (const { _id, count } of byCanaryAndDay) {
      const days = perCanary.get(_id.canaryId) ?? [];
      days.push({ key: _id.day, count });
      perCanary.set(_id.canaryId, days);
    }
    const known = new Map(
      (await this.canaries.findMany(accountId, [...perCanary.keys()])).map((c) => [c.id, c]),
    );
    const canaries = [...perCanary]
      .map(([canaryId, days]) => ({
        canaryId,
        // Hits of a trap, a document or an agent have no canary record of their own.
        kind: known.get(canaryId)?.kind ?? 'other',
        memo: known.get(canaryId)?.memo ?? '',
        hits: days.reduce((sum, d) => sum + d.count, 0),
        byDay: days.sort((a, b) => a.key.localeCompare(b.key)),
      }))
      .sort((a, b) => b.hits - a.hits || a.canaryId.localeCompare(b.canaryId));
    const failed = new Map(failedByChannel.map((row) => [row._id, row.count]));

    return weeklyDigestPayloadSchema.parse({
      version: '1',
      event: WEEKLY_DIGEST_EVENT,
      sentAt: now.toISOString(),
      data: {
        event: WEEKLY_DIGEST_EVENT,
        accountId,
        from: from.toISOString(),
        to: now.toISOString(),
        timeZone,
        totalHits: canaries.reduce((sum, c) => sum + c.hits, 0),
        canaries,
        sourcesByCountry: figures.sourcesByCountry,
        deliveriesByOutcome: figures.deliveriesByOutcome,
        stillFailing: figures.channelHealth
          .filter((c) => !c.healthy && c.lastError && c.lastErrorAt)
          .map((c) => ({
            channelId: c.channelId,
            name: c.name,
            kind: c.kind,
            lastError: c.lastError!,
            lastErrorAt: c.lastErrorAt!.toISOString(),
            failedThisWeek: failed.get(c.channelId) ?? 0,
          })),
        threatEventId: null,
      },
    } satisfies WeeklyDigestPayload);
  }
}
