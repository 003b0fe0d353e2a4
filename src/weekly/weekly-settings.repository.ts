import type { Collection, Db } from 'mongodb';
import type { CollectionIndexes } from '../db/mongo';

export const WEEKDAYS = [
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** When and where an account's weekly digest goes. */
export interface WeeklySettings {
  enabled: boolean;
  weekday: Weekday;
  /** The hour of the day (0–23) in `timeZone`. */
  hour: number;
  /** An IANA time zone: the schedule's and the digest's days. */
  timeZone: string;
  /** Alert channel ids, built-ins (`builtin:email`, `builtin:chat`) among them. */
  channels: string[];
}

/** An account's settings as stored, with what keeps its Temporal Schedule in step. */
export interface StoredWeeklySettings extends WeeklySettings {
  accountId: string;
  /** Raised on every change; the schedule's note names the version it was made from. */
  version: number;
  /** Set with every change and cleared once the schedule matches it (the reconciler's outbox). */
  schedulePendingSince: Date | null;
  updatedAt: Date;
}

/** What an account that never chose has: off, Monday 09:00 UTC, no channel. */
export const DEFAULT_WEEKLY_SETTINGS: WeeklySettings = {
  enabled: false,
  weekday: 'monday',
  hour: 9,
  timeZone: 'UTC',
  channels: [],
};

type SettingsDoc = Omit<StoredWeeklySettings, 'accountId' | 'schedulePendingSince'> & {
  _id: string;
  schedulePendingSince?: Date;
};

export const weeklySettingsIndexes: CollectionIndexes = {
  collection: 'weekly_digests',
  indexes: [{ key: { schedulePendingSince: 1 }, name: 'schedule_pending', sparse: true }],
};

const toSettings = ({ _id, schedulePendingSince, ...rest }: SettingsDoc): StoredWeeklySettings => ({
  accountId: _id,
  ...rest,
  schedulePendingSince: schedulePendingSince ?? null,
});

/** One document per account (`_id` is the account id). */
export class WeeklySettingsRepository {
  private readonly settings: Collection<SettingsDoc>;

  constructor(db: Db) {
    this.settings = db.collection<SettingsDoc>(weeklySettingsIndexes.collection);
  }

  async find(accountId: string): Promise<StoredWeeklySettings | null> {
    const doc = await this.settings.findOne({ _id: accountId });
    return doc && toSettings(doc);
  }

  /** Replaces the settings under a new version, marked as not yet on the schedule. */
  async save(
    accountId: string,
    settings: WeeklySettings,
    now: Date,
  ): Promise<StoredWeeklySettings> {
    const doc = await this.settings.findOneAndUpdate(
      { _id: accountId },
      {
        $set: { ...settings, updatedAt: now, schedulePendingSince: now },
        $inc: { version: 1 },
      },
      { upsert: true, returnDocument: 'after' },
    );
    return toSettings(doc!);
  }

  /** The schedule matches `version`: clears the mark, unless a newer change came meanwhile. */
  async scheduleSynced(accountId: string, version: number): Promise<void> {
    await this.settings.updateOne(
      { _id: accountId, version },
      { $unset: { schedulePendingSince: '' } },
    );
  }

  /** Settings whose schedule may not match them, marked before `before` (oldest first). */
  async pendingSchedules(before: Date, limit: number): Promise<StoredWeeklySettings[]> {
    const docs = await this.settings
      .find({ schedulePendingSince: { $lt: before } })
      .sort({ schedulePendingSince: 1 })
      .limit(limit)
      .toArray();
    return docs.map(toSettings);
  }
}
