import type { Collection, Db } from 'mongodb';
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
  createdAt: Date;
  updatedAt: Date;
}

type ChannelDoc = Omit<AlertChannel, 'id'> & { _id: string };

type RoutingFields = 'events' | 'minLevel' | 'standardWebhooks';

export type ChannelChanges = Partial<
  Pick<AlertChannel, 'name' | 'url' | 'secret' | 'disabled' | RoutingFields>
>;

/** Channels made before routing existed have no routing fields: they receive everything. */
function withDefaults(
  channel: Omit<AlertChannel, RoutingFields | 'previousSecret'> & Partial<AlertChannel>,
): AlertChannel {
  return {
    ...channel,
    events: channel.events ?? null,
    minLevel: channel.minLevel ?? null,
    standardWebhooks: channel.standardWebhooks ?? false,
    previousSecret: channel.previousSecret ?? null,
  };
}

export const channelsIndexes: CollectionIndexes = {
  collection: 'alert_channels',
  indexes: [{ key: { accountId: 1, createdAt: 1 }, name: 'account_created' }],
};

function toChannel({ _id, ...rest }: ChannelDoc): AlertChannel {
  return withDefaults({ id: _id, ...rest });
}

/**
 * Reads and writes name the owning account in their filter; only `ownerOf` and the worker's
 * `recordOutcome` (after a delivery, on no caller's behalf) go by id alone.
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
        $set: { ...changes, ...('secret' in changes && { previousSecret: null }), updatedAt: now },
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
   * After an alert's deliveries, in one write: success clears a channel's `lastError`, failure
   * sets it. Unscoped: the worker records it on no caller's behalf, and the delivery already
   * checked the channel's account.
   */
  async recordOutcomes(
    outcomes: { channelId: string; error: ChannelError | null }[],
    at: Date,
  ): Promise<void> {
    if (!outcomes.length) return;
    await this.channels.bulkWrite(
      outcomes.map(({ channelId, error }) => ({
        updateOne: {
          filter: { _id: channelId },
          update: { $set: error ? { lastError: error } : { lastError: null, lastDeliveryAt: at } },
        },
      })),
      { ordered: false },
    );
  }
}
