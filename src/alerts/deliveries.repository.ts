import type { Collection, Db } from 'mongodb';
import { isDuplicateKeyError, type CollectionIndexes } from '../db/mongo';
import type { AlertPayloadJson, ChannelResult, DeliveryOutcome } from '../../workflows/shared';
import type { AnswerExcerpt } from './http-delivery';

export interface DeliveryAttempt {
  attempt: number;
  at: Date;
  durationMs: number;
  status: number | null;
  error: string | null;
  /** The start of the receiver's answer; null when none came. */
  answer?: AnswerExcerpt | null;
}

/** One alert to one channel: every attempt, then the outcome. Keyed by the delivery id. */
export interface DeliveryRecord {
  id: string;
  accountId: string;
  channelId: string;
  workflowId: string;
  event: string;
  threatEventId: string | null;
  attempts: DeliveryAttempt[];
  outcome: DeliveryOutcome | null;
  status: number | null;
  error: string | null;
  createdAt: Date;
  finishedAt: Date | null;
  /** The payload sent, kept for a resend; null until the outcome is recorded. */
  payload?: AlertPayloadJson | null;
  /** A resend: the delivery id receivers saw first, sent again as `X-Service-Delivery`. */
  resendOf?: string | null;
}

/**
 * Attempts are stored by number (`attempts.<n>`), so recording one is an idempotent `$set` on a
 * filter of `_id` alone: a retried write of the same attempt changes nothing.
 */
type DeliveryDoc = Omit<DeliveryRecord, 'id' | 'attempts'> & {
  _id: string;
  attempts?: Record<string, DeliveryAttempt>;
};

export interface DeliveryContext {
  accountId: string;
  channelId: string;
  deliveryId: string;
  workflowId: string;
  event: string;
  threatEventId: string | null;
}

export const deliveriesIndexes: CollectionIndexes = {
  collection: 'alert_deliveries',
  indexes: [
    { key: { accountId: 1, channelId: 1, createdAt: -1 }, name: 'channel_newest_first' },
    { key: { accountId: 1, threatEventId: 1, createdAt: 1 }, name: 'threat_event_oldest_first' },
  ],
};

/**
 * A bound on one event's deliveries: a few per channel (the first try and any resends), so this is
 * far above what an account's channels make, yet keeps one answer small.
 */
export const MAX_PER_THREAT_EVENT = 500;

export class DeliveriesRepository {
  private readonly deliveries: Collection<DeliveryDoc>;

  constructor(db: Db) {
    this.deliveries = db.collection<DeliveryDoc>(deliveriesIndexes.collection);
  }

  private onInsert(context: DeliveryContext, now: Date) {
    const { accountId, channelId, workflowId, event, threatEventId } = context;
    return { accountId, channelId, workflowId, event, threatEventId, createdAt: now };
  }

  /** Idempotent per attempt number: a retried write of the same attempt changes nothing. */
  async recordAttempt(context: DeliveryContext, attempt: DeliveryAttempt): Promise<void> {
    const write = () =>
      this.deliveries.updateOne(
        { _id: context.deliveryId },
        {
          $setOnInsert: {
            ...this.onInsert(context, attempt.at),
            outcome: null,
            status: null,
            error: null,
            finishedAt: null,
          },
          $set: { [`attempts.${attempt.attempt}`]: attempt },
        },
        { upsert: true },
      );
    try {
      await write();
    } catch (err) {
      // Two upserts raced to create the record: it exists now, so the second write updates it.
      if (!isDuplicateKeyError(err)) throw err;
      await write();
    }
  }

  /**
   * The outcomes of one alert's deliveries, in one write; writing one again changes nothing. A
   * delivery's last attempt may come with its outcome (one write for both), kept like
   * `recordAttempt` keeps one.
   */
  async recordOutcomes(
    outcomes: { context: DeliveryContext; result: ChannelResult; lastAttempt?: DeliveryAttempt }[],
    now: Date,
    resend?: { payload: AlertPayloadJson; resendOf: string | null },
  ): Promise<void> {
    if (!outcomes.length) return;
    await this.deliveries.bulkWrite(
      outcomes.map(({ context, result, lastAttempt }) => ({
        updateOne: {
          filter: { _id: context.deliveryId },
          update: {
            $set: {
              outcome: result.outcome,
              status: result.status ?? null,
              error: result.error ?? null,
              finishedAt: now,
              ...resend,
              ...(lastAttempt && { [`attempts.${lastAttempt.attempt}`]: lastAttempt }),
            },
            $setOnInsert: this.onInsert(context, now),
          },
          upsert: true,
        },
      })),
      { ordered: false },
    );
  }

  /**
   * Whether a workflow's first round is recorded: it has delivery records (every round records
   * one per target, skipped ones too), and none is still waiting for its outcome.
   */
  async roundRecorded(accountId: string, threatEventId: string, workflowId: string) {
    const docs = await this.deliveries
      .find({ accountId, threatEventId, workflowId }, { projection: { outcome: 1 } })
      .limit(MAX_PER_THREAT_EVENT)
      .toArray();
    return docs.length > 0 && docs.every((d) => d.outcome !== null);
  }

  async listForChannel(
    accountId: string,
    channelId: string,
    limit: number,
  ): Promise<DeliveryRecord[]> {
    const docs = await this.deliveries
      .find({ accountId, channelId })
      .sort({ createdAt: -1 })
      .limit(limit)
      .toArray();
    return docs.map(toRecord);
  }

  /** Every delivery made for one threat event, to any channel (resends included), oldest first. */
  async listForThreatEvent(accountId: string, threatEventId: string): Promise<DeliveryRecord[]> {
    const docs = await this.deliveries
      .find({ accountId, threatEventId })
      .sort({ createdAt: 1 })
      .limit(MAX_PER_THREAT_EVENT)
      .toArray();
    return docs.map(toRecord);
  }

  async find(accountId: string, channelId: string, deliveryId: string) {
    const doc = await this.deliveries.findOne({ _id: deliveryId, accountId, channelId });
    return doc && toRecord(doc);
  }

  /** The channel's failed deliveries since `since`, oldest first (a bulk resend's order). */
  async listFailedSince(
    accountId: string,
    channelId: string,
    since: Date,
    limit: number,
  ): Promise<DeliveryRecord[]> {
    const docs = await this.deliveries
      .find({ accountId, channelId, createdAt: { $gte: since }, outcome: 'failed' })
      .sort({ createdAt: 1 })
      .limit(limit)
      .toArray();
    return docs.map(toRecord);
  }

  /** Of these first delivery ids, those delivered since `since` (first time or by a resend). */
  async deliveredOf(
    accountId: string,
    channelId: string,
    since: Date,
    firstIds: string[],
  ): Promise<Set<string>> {
    const docs = await this.deliveries
      .find({
        accountId,
        channelId,
        createdAt: { $gte: since },
        outcome: 'delivered',
        $or: [{ _id: { $in: firstIds } }, { resendOf: { $in: firstIds } }],
      })
      .project<{ _id: string; resendOf?: string | null }>({ _id: 1, resendOf: 1 })
      .toArray();
    return new Set(docs.map((d) => d.resendOf ?? d._id));
  }
}

function toRecord({ _id, attempts = {}, ...rest }: DeliveryDoc): DeliveryRecord {
  return {
    id: _id,
    attempts: Object.values(attempts).sort((a, b) => a.attempt - b.attempt),
    ...rest,
    // A field the record does not have yet (the payload and the first delivery id come with the
    // outcome) reads as null.
    threatEventId: rest.threatEventId ?? null,
    outcome: rest.outcome ?? null,
    status: rest.status ?? null,
    error: rest.error ?? null,
    finishedAt: rest.finishedAt ?? null,
    payload: rest.payload ?? null,
    resendOf: rest.resendOf ?? null,
  };
}
