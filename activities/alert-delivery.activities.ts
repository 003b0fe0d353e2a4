import { log } from '@temporalio/activity';
import type { AlertOutcomes, AlertContext } from '../src/alerts/alert-outcomes';
import type { ChannelSender } from '../src/alerts/channel-sender';
import type { DeliveryContext } from '../src/alerts/deliveries.repository';
import type { DeliveryTargets } from '../src/alerts/delivery-targets';
import type { RoutedAlert } from '../src/alerts/routing';
import { deliveryAttempts } from '../src/metrics';
import type {
  AlertPayloadJson,
  AttemptReport,
  ChannelResult,
  DeliveryTarget,
} from '../workflows/shared';
import { parsePayload } from './payload-input';

export interface AlertDeliveryDeps {
  targets: DeliveryTargets;
  sender: ChannelSender;
  outcomes: AlertOutcomes;
}

export function alertDeliveryActivities({ targets, sender, outcomes }: AlertDeliveryDeps) {
  return {
    /** The channels that receive an alert (see `DeliveryTargets`). */
    async listDeliveryTargets(
      accountId: string,
      channelIds: string[] | undefined,
      alert: RoutedAlert,
    ): Promise<DeliveryTarget[]> {
      return (await targets.read(accountId, channelIds))(alert);
    },

    /**
     * One attempt, reported (never thrown) whatever the receiver answered; writes nothing
     * (recording is the workflow's next step).
     */
    async sendAlertAttempt(input: {
      accountId: string;
      channelId: string;
      deliveryId: string;
      /** A resend: the delivery id receivers saw first, sent again. */
      resendOf?: string;
      attempt: number;
      payload: AlertPayloadJson;
      /** Channel kind and the alert's request id: for metrics and logs only. */
      kind: string;
      requestId?: string;
    }): Promise<AttemptReport> {
      const payload = parsePayload(input.payload);
      const at = new Date();
      const started = performance.now();
      const attempt = await sender.attempt(input.accountId, input.channelId, {
        payload,
        deliveryId: input.resendOf ?? input.deliveryId,
        now: at,
      });
      deliveryAttempts.inc({ kind: input.kind, attempt: input.attempt, verdict: attempt.verdict });
      // The request id of the HTTP request that raised the alert: one alert can be followed from
      // the API's log line to the receiver's answer.
      log.info('delivery attempt', {
        requestId: input.requestId ?? null,
        deliveryId: input.deliveryId,
        attempt: input.attempt,
        status: attempt.status,
        verdict: attempt.verdict,
      });
      return {
        attempt: input.attempt,
        at: at.toISOString(),
        durationMs: Math.round(performance.now() - started),
        verdict: attempt.verdict,
        status: attempt.status,
        error: attempt.error,
        answer: attempt.answer ?? null,
      };
    },

    /** Keeps one attempt's report on its delivery record; idempotent per attempt number. */
    async recordDeliveryAttempt(input: DeliveryContext & { report: AttemptReport }): Promise<void> {
      const { report, ...context } = input;
      await outcomes.recordAttempt(context, report);
    },

    /**
     * All of an alert's outcomes in one step, skips included, once every channel is done (see
     * `AlertOutcomes.record`), each delivery's last attempt with them.
     */
    async recordAlertOutcomes(
      input: AlertContext & {
        results: ChannelResult[];
        lastAttempts: Record<string, AttemptReport>;
      },
    ): Promise<void> {
      const { results, lastAttempts, ...alert } = input;
      await outcomes.record(alert, results, lastAttempts);
    },
  };
}
