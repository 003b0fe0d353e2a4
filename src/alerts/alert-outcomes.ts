import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { DELIVERY_OUTCOME_KIND, type deliveryOutcomeData } from '../evidence/trail/audit-trail';
import type { EvidenceStore } from '../evidence/evidence.store';
import { deliveryOutcomes } from '../metrics';
import type { AlertPayloadJson, AttemptReport, ChannelResult } from '../../workflows/shared';
import { isBuiltInChannel } from './built-in-channels';
import type { ChannelsRepository } from './channels.repository';
import type {
  DeliveriesRepository,
  DeliveryAttempt,
  DeliveryContext,
} from './deliveries.repository';

/** What every outcome record of one alert shares. */
export interface AlertContext {
  accountId: string;
  workflowId: string;
  event: string;
  threatEventId: string | null;
  /** Kept on the record so it can be sent again. */
  payload: AlertPayloadJson;
  resendOf: string | null;
  /** The recovery round these outcomes come from (0 or absent: the first delivery). */
  recovery?: number;
}

export function attemptRecord(report: AttemptReport): DeliveryAttempt {
  return {
    attempt: report.attempt,
    at: new Date(report.at),
    durationMs: report.durationMs,
    status: report.status,
    error: report.error,
    answer: report.answer,
  };
}

/** The evidence log id of a delivery's sealed outcome: fixed, so a retried record seals it once. */
export const outcomeLogId = (deliveryId: string, recovery = 0) =>
  `evd_${createHash('sha256')
    .update(recovery ? `${deliveryId}:recovery-${recovery}` : deliveryId)
    .digest('base64url')
    .slice(0, 16)}`;

/**
 * Where an alert's deliveries are recorded: each attempt on its delivery record, and once every
 * channel is done, the outcomes on the delivery records, each channel's last error, and the audit
 * trail in the account's evidence log.
 */
export class AlertOutcomes {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly channels: ChannelsRepository,
    private readonly evidence: EvidenceStore,
  ) {}

  /** Idempotent per attempt number. */
  recordAttempt(context: DeliveryContext, report: AttemptReport): Promise<void> {
    return this.deliveries.recordAttempt(context, attemptRecord(report));
  }

  /**
   * Every outcome of an alert, skips included. The delivery records, the channels' state and the
   * sealed outcomes are independent writes, each idempotent (so a retried record repeats them
   * safely): they go at once. A skip stays in the delivery record; deliveries, successful or not,
   * go further: one write for every channel's state, one sealed append for every outcome.
   */
  async record(
    alert: AlertContext,
    results: ChannelResult[],
    /** By delivery id: the last attempt's report, not recorded yet. */
    lastAttempts: Record<string, AttemptReport>,
  ): Promise<void> {
    const { accountId, workflowId, event, threatEventId, payload, resendOf, recovery } = alert;
    const now = new Date();
    const sent = results.filter((result) => result.outcome !== 'skipped');
    await Promise.all([
      this.deliveries.recordOutcomes(
        results.map((result) => {
          const last = lastAttempts[result.deliveryId];
          return {
            context: {
              accountId,
              channelId: result.channelId,
              deliveryId: result.deliveryId,
              workflowId,
              event,
              threatEventId,
            },
            result,
            ...(last && { lastAttempt: attemptRecord(last) }),
          };
        }),
        now,
        { payload, resendOf },
      ),
      this.channels.recordOutcomes(
        sent
          .filter((result) => !isBuiltInChannel(result.channelId))
          .map((result) => ({
            channelId: result.channelId,
            error:
              result.outcome === 'failed'
                ? { message: result.error ?? 'failed', status: result.status ?? null, at: now }
                : null,
          })),
        now,
      ),
      this.evidence.appendMany(
        accountId,
        sent.map((result) => ({
          logId: outcomeLogId(result.deliveryId, recovery),
          kind: DELIVERY_OUTCOME_KIND,
          data: {
            delivery_id: result.deliveryId,
            workflow_id: workflowId,
            channel_id: result.channelId,
            channel_kind: result.kind,
            event,
            threat_event_id: threatEventId,
            outcome: result.outcome,
            status: result.status ?? null,
            error: result.error ?? null,
          } satisfies z.output<typeof deliveryOutcomeData>,
        })),
      ),
    ]);
    for (const result of results) {
      deliveryOutcomes.inc({ kind: result.kind, outcome: result.outcome });
    }
  }
}
