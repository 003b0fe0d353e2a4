import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';
import type { CollectionIndexes } from '../db/mongo';
import { newId } from '../ids';
import type { AlertEvent, AlertLevel } from './payload';
import type { ChannelKind } from './providers';

export { CHANNEL_KINDS, type ChannelKind } from './providers';

export interface ChannelError {
  message: string;
  status: number | null;
  at: Date;
}

export interface AlertChannel {
  id: string;
  accountId: string;
  kind: ChannelKind;
  name: string;
  url: string;
  /** Generic webhooks: the HMAC key; PagerDuty: the routing key. Write-only: never returned by the API. */
  secret: string | null;
  /**
   * After a rotation: the secret it replaced, and until when deliveries are still signed for it
   * (the overlap). Write-only like `secret`.
   */
  previousSecret: { secret: string; until: Date } | null;
  disabled: boolean;
  /** Routing: the event kinds this channel receives (null: all), and the lowest alert level. */
  events: AlertEvent[] | null;
  minLevel: AlertLevel | null;
  /** Generic webhooks: also send the Standard Webhooks headers (`webhook-id`, …). */
  standardWebhooks: boolean;
  lastError: ChannelError | null;
  lastDeliveryAt: Date | null;
  /**
   * Endpoint health: the first failed delivery since the channel last delivered (or was enabled
   * again); null while it delivers. Past `CHANNEL_DISABLE_AFTER` the channel is disabled.
   */
  failingSince: Date | null;
  /** Why and when the service disabled the channel itself; null otherwise (and once enabled). */
  disabledReason: string | null;
  disabledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

type ChannelDoc = Omit<AlertChannel, 'id'> & {
  _id: string;
  /**
   * The outcome record (its sealed log id) whose failure disabled the channel: that record, run
   * again after a crash, finds its own disable and finishes the audit entry and the notice.
   */
  disabledBy?: string | null;
};

/** Fields that channels made before them lack: `withDefaults` fills them in. */
type RoutingFields = 'events' | 'minLevel' | 'standardWebhooks';
type LaterFields =
  RoutingFields | 'previousSecret' | 'failingSince' | 'disabledReason' | 'disabledAt';

/** A channel the service disabled, with what the audit entry and the notice say of it. */
export interface DisabledChannel {
  channel: AlertChannel;
  /** The outcome record that disabled it: the audit entry and the notice are named after it. */
  disabledBy: string;
}

export type ChannelChanges = Partial<
  Pick<AlertChannel, 'name' | 'url' | 'secret' | 'disabled' | RoutingFields>
>;

/** Channels made before routing existed have no routing fields: they receive everything. */
function withDefaults(
  channel: Omit<AlertChannel, LaterFields> & Partial<AlertChannel>,
): AlertChannel {
  return {
    ...channel,
    events: channel.events ?? null,
    minLevel: channel.minLevel ?? null,
    standardWebhooks: channel.standardWebhooks ?? false,
    previousSecret: channel.previousSecret ?? null,
    failingSince: channel.failingSince ?? null,
    disabledReason: channel.disabledReason ?? null,
    disabledAt: channel.disabledAt ?? null,
  };
}

export const channelsIndexes: CollectionIndexes = {
  collection: 'alert_channels',
  indexes: [{ key: { accountId: 1, createdAt: 1 }, name: 'account_created' }],
};

function toChannel({ _id, disabledBy: _, ...rest }: ChannelDoc): AlertChannel {
  return withDefaults({ id: _id, ...rest });
}

/** Enabling a channel clears why the service disabled it and restarts its health clock. */
const ENABLED_AGAIN = {
  failingSince: null,
  disabledReason: null,
  disabledAt: null,
  disabledBy: null,
};

/** How exact a channel's `lastDeliveryAt` is: a healthy channel's is refreshed at most this often. */
export const LAST_DELIVERY_RESOLUTION_MS = 60_000;

/** Healthy, and delivered under `LAST_DELIVERY_RESOLUTION_MS` before `at`. */
function deliveredRecently(channel: AlertChannel, at: Date): boolean {
  return (
    !channel.lastError &&
    !channel.failingSince &&
    channel.lastDeliveryAt !== null &&
    at.getTime() - channel.lastDeliveryAt.getTime() < LAST_DELIVERY_RESOLUTION_MS
  );
}

/**
 * Reads and writes name the owning account in their filter; only `ownerOf` and the worker's
 * `recordOutcomes` (after a delivery, on no caller's behalf) go by id alone.
 */
export class ChannelsRepository {
  private readonly channels: Collection<ChannelDoc>;

  constructor(db: Db) {
    this.channels = db.collection<ChannelDoc>(channelsIndexes.collection);
  }

  async create(
    fields: Pick<AlertChannel, 'accountId' | 'kind' | 'name' | 'url' | 'secret'> &
      Partial<Pick<AlertChannel, RoutingFields>>,
    now: Date,
  ): Promise<AlertChannel> {
    const doc: ChannelDoc = {
      _id: newId('chn'),
      events: null,
      minLevel: null,
      standardWebhooks: false,
      ...fields,
      previousSecret: null,
      disabled: false,
      lastError: null,
      lastDeliveryAt: null,
      failingSince: null,
      disabledReason: null,
      disabledAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.channels.insertOne(doc);
    return toChannel(doc);
  }

  async list(accountId: string): Promise<AlertChannel[]> {
    return (await this.channels.find({ accountId }).sort({ createdAt: 1 }).toArray()).map(
      toChannel,
    );
  }

  async find(accountId: string, channelId: string): Promise<AlertChannel | null> {
    const doc = await this.channels.findOne({ _id: channelId, accountId });
    return doc && toChannel(doc);
  }

  /** Unscoped, and only the owner: for the 404-versus-403 answer when `find` finds nothing. */
  async ownerOf(channelId: string): Promise<string | null> {
    const doc = await this.channels.findOne({ _id: channelId }, { projection: { accountId: 1 } });
    return doc?.accountId ?? null;
  }

  async update(accountId: string, channelId: string, changes: ChannelChanges, now: Date) {
    const doc = await this.channels.findOneAndUpdate(
      { _id: channelId, accountId },
      // A secret set outright replaces it at once: no rotation's overlap survives it.
      {
        $set: {
          ...changes,
          ...('secret' in changes && { previousSecret: null }),
          ...(changes.disabled === false && ENABLED_AGAIN),
          updatedAt: now,
        },
      },
      { returnDocument: 'after' },
    );
    return doc && toChannel(doc);
  }

  /**
   * A new secret, the current one kept valid `until` the overlap ends. Conditional on the secret
   * read before, so two rotations at once cannot both keep the same old secret: null then.
   */
  async rotateSecret(channel: AlertChannel, secret: string, until: Date, now: Date) {
    const doc = await this.channels.findOneAndUpdate(
      { _id: channel.id, accountId: channel.accountId, secret: channel.secret },
      {
        $set: {
          secret,
          previousSecret: channel.secret ? { secret: channel.secret, until } : null,
          updatedAt: now,
        },
      },
      { returnDocument: 'after' },
    );
    return doc && toChannel(doc);
  }

  async remove(accountId: string, channelId: string): Promise<boolean> {
    return (await this.channels.deleteOne({ _id: channelId, accountId })).deletedCount === 1;
  }

  /**
   * After an alert's deliveries, in one write: success clears a channel's `lastError` and its
   * failing clock, failure sets the error and starts the clock if it is not running. Unscoped:
   * the worker records it on no caller's behalf, and the delivery already checked the channel's
   * account. A success on a channel that was healthy when `read`, and last delivered under
   * `LAST_DELIVERY_RESOLUTION_MS` before, changes nothing worth a write: a channel taking many
   * alerts a minute is written about once a minute rather than once an alert.
   */
  async recordOutcomes(
    outcomes: { channelId: string; error: ChannelError | null; read?: AlertChannel | null }[],
    at: Date,
  ): Promise<void> {
    const writes = outcomes.flatMap(
      ({ channelId, error, read }): AnyBulkWriteOperation<ChannelDoc>[] =>
        error
          ? [
              { updateOne: { filter: { _id: channelId }, update: { $set: { lastError: error } } } },
              {
                updateOne: {
                  filter: { _id: channelId, failingSince: null },
                  update: { $set: { failingSince: at } },
                },
              },
            ]
          : read && deliveredRecently(read, at)
            ? []
            : [
                {
                  updateOne: {
                    filter: { _id: channelId },
                    update: { $set: { lastError: null, lastDeliveryAt: at, failingSince: null } },
                  },
                },
              ],
    );
    if (writes.length) await this.channels.bulkWrite(writes, { ordered: false });
  }

  /**
   * Disables a channel failing since `cutoff` or earlier, in one conditional write: of several
   * workers recording failures at once only one matches, so it is disabled (and announced) once.
   * `by` names the outcome record; that record run again finds the channel it disabled. Null when
   * the channel is healthy, already disabled, or gone.
   */
  async disableFailing(
    channelId: string,
    cutoff: Date,
    reason: string,
    by: string,
    now: Date,
  ): Promise<DisabledChannel | null> {
    const doc =
      (await this.channels.findOneAndUpdate(
        { _id: channelId, disabled: false, failingSince: { $ne: null, $lte: cutoff } },
        {
          $set: {
            disabled: true,
            disabledReason: reason,
            disabledAt: now,
            disabledBy: by,
            updatedAt: now,
          },
        },
        { returnDocument: 'after' },
      )) ?? (await this.channels.findOne({ _id: channelId, disabledBy: by }));
    return doc && { channel: toChannel(doc), disabledBy: by };
  }
}
