import { DomainError } from '../errors';
import type { Temporal } from '../temporal/client';
import { startResend } from './alert-workflows';
import type { DeliveriesRepository, DeliveryRecord } from './deliveries.repository';

/** At most this many deliveries are sent again by one bulk resend; `more` says to call again. */
export const BULK_RESEND_LIMIT = 100;

export interface Resent {
  /** The new delivery's record id (its attempts and outcome are listed with the channel's). */
  deliveryId: string;
  workflowId: string;
  /** The delivery id receivers see again (`X-Service-Delivery`). */
  resendOf: string;
}

/** The delivery id receivers saw first, however many times it was resent since. */
const firstId = (record: DeliveryRecord) => record.resendOf ?? record.id;

/** Sends recorded alerts again, each through a new alert workflow to its one channel. */
export class Resends {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly temporal: Temporal,
  ) {}

  private async start(record: DeliveryRecord, requestId: string | undefined): Promise<Resent> {
    if (!record.payload) {
      throw new DomainError(
        'conflict',
        `Delivery ${record.id} was recorded without its payload: it cannot be sent again`,
      );
    }
    const resendOf = firstId(record);
    const started = await startResend(this.temporal, {
      accountId: record.accountId,
      channelId: record.channelId,
      payload: record.payload,
      resendOf,
      requestId,
    });
    return { ...started, resendOf };
  }

  async one(
    accountId: string,
    channelId: string,
    deliveryId: string,
    requestId?: string,
  ): Promise<Resent> {
    const record = await this.deliveries.find(accountId, channelId, deliveryId);
    if (!record) {
      throw new DomainError('not_found', `No delivery ${deliveryId} on channel ${channelId}`);
    }
    if (!record.outcome) {
      throw new DomainError('conflict', `Delivery ${deliveryId} is still being attempted`);
    }
    return this.start(record, requestId);
  }

  /**
   * Every alert whose delivery to this channel failed since `since`, once each (an alert whose
   * resend has since been delivered is left alone), oldest first.
   */
  async failedSince(
    accountId: string,
    channelId: string,
    since: Date,
    requestId?: string,
  ): Promise<{ resent: Resent[]; more: boolean }> {
    const failed = await this.deliveries.listFailedSince(
      accountId,
      channelId,
      since,
      BULK_RESEND_LIMIT + 1,
    );
    const more = failed.length > BULK_RESEND_LIMIT;
    const delivered = await this.deliveries.deliveredOf(
      accountId,
      channelId,
      since,
      failed.map(firstId),
    );
    const pending = new Map<string, DeliveryRecord>();
    for (const record of failed.slice(0, BULK_RESEND_LIMIT)) {
      const id = firstId(record);
      if (record.payload && !delivered.has(id) && !pending.has(id)) pending.set(id, record);
    }
    const resent: Resent[] = [];
    for (const record of pending.values()) resent.push(await this.start(record, requestId));
    return { resent, more };
  }
}
