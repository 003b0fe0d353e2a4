import { createHash } from 'node:crypto';
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { Db } from 'mongodb';
import type { z } from 'zod';
import { isBuiltInChannel, type BuiltInSettings } from '../src/alerts/built-in-channels';
import { ChannelSender } from '../src/alerts/channel-sender';
import { ChannelsRepository } from '../src/alerts/channels.repository';
import { DeliveriesRepository, type DeliveryContext } from '../src/alerts/deliveries.repository';
import { alertPayloadSchema } from '../src/alerts/payload';
import type { RoutedAlert } from '../src/alerts/routing';
import type { DeliveryTargets } from '../src/alerts/delivery-targets';
import { DELIVERY_OUTCOME_KIND, type deliveryOutcomeData } from '../src/evidence/trail/audit-trail';
import type { EvidenceStore } from '../src/evidence/evidence.store';
import { deliveryAttempts, deliveryOutcomes } from '../src/metrics';
import {
  DELIVERY_REJECTED,
  DELIVERY_RETRYABLE,
  type AlertPayloadJson,
  type AttemptReport,
  type ChannelResult,
  type DeliveryTarget,
} from '../workflows/shared';

export interface AlertDeliveryDeps {
  db: Db;
  /** ALLOW_PRIVATE_WEBHOOK_TARGETS: development and tests only. */
  allowPrivateTargets: boolean;
  /** The operator's deny list (OUTBOUND_DENY_CIDRS); none when absent. */
  outboundDeny?: readonly string[];
  builtIns: BuiltInSettings;
  evidence: EvidenceStore;
  targets: DeliveryTargets;
}

interface AttemptInput {
  accountId: string;
  channelId: string;
  deliveryId: string;
  /** A resend: the delivery id receivers saw first, sent again. */
  resendOf?: string;
  payload: AlertPayloadJson;
  /** Channel kind and the alert's request id: for metrics and logs only. */
  kind?: string;
  requestId?: string;
}

/** What every outcome record of one alert shares. */
interface AlertContext {
  accountId: string;
  workflowId: string;
  event: string;
  threatEventId: string | null;
  /** Kept on the record so it can be sent again (absent in older histories). */
  payload?: AlertPayloadJson;
  resendOf?: string | null;
}

export function alertDeliveryActivities({
  db,
  allowPrivateTargets,
  outboundDeny = [],
  builtIns,
  evidence,
  targets,
}: AlertDeliveryDeps) {
  const channels = new ChannelsRepository(db);
  const deliveries = new DeliveriesRepository(db);
  const sender = new ChannelSender(db, allowPrivateTargets, builtIns, outboundDeny);

  /** Sends once and reports what happened; writes nothing (recording is the workflow's next step). */
  const sendOnce = async (input: AttemptInput, number: number): Promise<AttemptReport> => {
    const payload = alertPayloadSchema.parse(input.payload);
    const at = new Date();
    const started = performance.now();
    const attempt = await sender.attempt(input.accountId, input.channelId, {
      payload,
      deliveryId: input.resendOf ?? input.deliveryId,
      now: at,
    });
    deliveryAttempts.inc({
      kind: input.kind ?? 'unknown',
      attempt: number,
      verdict: attempt.verdict,
    });
    // The request id of the HTTP request that raised the alert: one alert can be followed from
    // the API's log line to the receiver's answer.
    log.info('delivery attempt', {
      requestId: input.requestId ?? null,
      deliveryId: input.deliveryId,
      attempt: number,
      status: attempt.status,
      verdict: attempt.verdict,
    });
    return {
      attempt: number,
      at: at.toISOString(),
      durationMs: Math.round(performance.now() - started),
      verdict: attempt.verdict,
      status: attempt.status,
      error: attempt.error,
      answer: attempt.answer ?? null,
    };
  };

  const attemptRecord = (report: AttemptReport) => ({
    attempt: report.attempt,
    at: new Date(report.at),
    durationMs: report.durationMs,
    status: report.status,
    error: report.error,
    answer: report.answer,
  });

  const recordAttempt = (context: DeliveryContext, report: AttemptReport) =>
    deliveries.recordAttempt(context, attemptRecord(report));

  const recordOutcomes = async (
    alert: AlertContext,
    results: ChannelResult[],
    lastAttempts: Record<string, AttemptReport> = {},
  ): Promise<void> => {
    const { accountId, workflowId, event, threatEventId, payload } = alert;
    const now = new Date();
    const context = (result: ChannelResult) => ({
      accountId,
      channelId: result.channelId,
      deliveryId: result.deliveryId,
      workflowId,
      event,
      threatEventId,
    });
    const resend = payload && { payload, resendOf: alert.resendOf ?? null };
    // The delivery records, the channels' state and the sealed outcomes are independent writes
    // (each idempotent, so a retried activity repeats them safely): they go at once. A skip stays
    // in the delivery record; deliveries, successful or not, go further: one write for every
    // channel's state, and one sealed append for every outcome.
    const sent = results.filter((result) => result.outcome !== 'skipped');
    await Promise.all([
      deliveries.recordOutcomes(
        results.map((result) => {
          const last = lastAttempts[result.deliveryId];
          return {
            context: context(result),
            result,
            ...(last && { lastAttempt: attemptRecord(last) }),
          };
        }),
        now,
        resend,
      ),
      channels.recordOutcomes(
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
      evidence.appendMany(
        accountId,
        sent.map((result) => ({
          // Fixed per delivery, so a retried activity seals the outcome once.
          logId: `evd_${createHash('sha256').update(result.deliveryId).digest('base64url').slice(0, 16)}`,
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
  };

  return {
    /** The channels that receive an alert (see `DeliveryTargets`). */
    async listDeliveryTargets(
      accountId: string,
      channelIds?: string[],
      alert?: RoutedAlert,
    ): Promise<DeliveryTarget[]> {
      return (await targets.read(accountId, channelIds))(alert);
    },

    /** One attempt, reported (never thrown) whatever the receiver answered. */
    async sendAlertAttempt(input: AttemptInput & { attempt: number }): Promise<AttemptReport> {
      return sendOnce(input, input.attempt);
    },

    /** Keeps one attempt's report on its delivery record; idempotent per attempt number. */
    async recordDeliveryAttempt(input: DeliveryContext & { report: AttemptReport }): Promise<void> {
      const { report, ...context } = input;
      await recordAttempt(context, report);
    },

    /**
     * Executions started before attempts were recorded apart (see `ATTEMPTS_APART` in the
     * workflow) still call this: one attempt and its record in one step, retried by Temporal.
     */
    async deliverToChannel(
      input: AttemptInput & { workflowId: string },
    ): Promise<{ status: number }> {
      const report = await sendOnce(input, Context.current().info.attempt);
      const payload = alertPayloadSchema.parse(input.payload);
      await recordAttempt(
        {
          accountId: input.accountId,
          channelId: input.channelId,
          deliveryId: input.deliveryId,
          workflowId: input.workflowId,
          event: payload.event,
          threatEventId: payload.data.threatEventId,
        },
        report,
      );
      if (report.verdict === 'delivered') return { status: report.status! };
      throw ApplicationFailure.create({
        message: report.error ?? 'delivery failed',
        type: report.verdict === 'retry' ? DELIVERY_RETRYABLE : DELIVERY_REJECTED,
        nonRetryable: report.verdict === 'give-up',
        details: [{ status: report.status }],
      });
    },

    /**
     * Executions started before outcomes were recorded in one step (see `LOCAL_BOOKKEEPING` in the
     * workflow) still call this: one channel's outcome, after its last attempt.
     */
    async recordDeliveryOutcome(input: AlertContext & { result: ChannelResult }): Promise<void> {
      const { result, ...alert } = input;
      await recordOutcomes(alert, [result]);
    },

    /**
     * All of an alert's outcomes in one step, skips included, once every channel is done: the
     * delivery records in one write (with each delivery's last attempt, when the workflow left it
     * to this write), each channel's last error, and the audit trail.
     */
    async recordAlertOutcomes(
      input: AlertContext & {
        results: ChannelResult[];
        /** By delivery id: the last attempt's report, not recorded yet (absent in older histories). */
        lastAttempts?: Record<string, AttemptReport>;
      },
    ): Promise<void> {
      const { results, lastAttempts, ...alert } = input;
      await recordOutcomes(alert, results, lastAttempts);
    },
  };
}
