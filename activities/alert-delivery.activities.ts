import { log } from '@temporalio/activity';
import type { AlertOutcomes, AlertContext } from '../src/alerts/alert-outcomes';
import type { ChannelSender } from '../src/alerts/channel-sender';
import type { DeliveryContext } from '../src/alerts/deliveries.repository';
import type { DeliveryTargets, ReadTargets } from '../src/alerts/delivery-targets';
import type { EvidenceInput } from '../src/evidence/evidence.store';
import type { Attempt } from '../src/alerts/http-delivery';
import type { OutgoingAlert } from '../src/alerts/providers/provider';
import type { RoutedAlert } from '../src/alerts/routing';
import { deliveryAttempts } from '../src/metrics';
import {
  channelResult,
  deliveryIdOf,
  type AlertPayloadJson,
  type AttemptReport,
  type ChannelResult,
  type DeliveryTarget,
  type FirstAttempts,
} from '../workflows/shared';
import { parsePayload } from './payload-input';

export interface AlertDeliveryDeps {
  targets: DeliveryTargets;
  sender: ChannelSender;
  outcomes: AlertOutcomes;
}

/** What one attempt is about, for its report, metrics and log line. */
interface AttemptLabel {
  deliveryId: string;
  attempt: number;
  /** Channel kind and the alert's request id: for metrics and logs only. */
  kind: string;
  requestId?: string;
}

/** One attempt made and reported: timed, counted and logged. */
async function reported(
  { deliveryId, attempt: number, kind, requestId }: AttemptLabel,
  send: (now: Date) => Promise<Attempt>,
): Promise<AttemptReport> {
  const at = new Date();
  const started = performance.now();
  const attempt = await send(at);
  deliveryAttempts.inc({ kind, attempt: number, verdict: attempt.verdict });
  // The request id of the HTTP request that raised the alert: one alert can be followed from
  // the API's log line to the receiver's answer.
  log.info('delivery attempt', {
    requestId: requestId ?? null,
    deliveryId,
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
}

/**
 * How long the first attempts' step waits on its record before leaving it to the workflow: the
 * receivers' answers are in by then and must reach the workflow whatever the database does.
 */
const RECORD_WAIT_MS = 5_000;

/** Whether `write` landed within `RECORD_WAIT_MS` (a later landing is harmless: it is idempotent). */
async function landed(write: () => Promise<void>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), RECORD_WAIT_MS);
  });
  try {
    return await Promise.race([write().then(() => true as const), waited]);
  } catch (err) {
    log.warn('delivery record failed; the workflow records it again', {
      error: err instanceof Error ? err.message : String(err),
    });
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * An alert's first attempts to the targets just read, all at once, each with the channel (or the
 * account) as read rather than reading it again; then, in the same step, the outcomes when every
 * attempt is final, or else the attempts to retry (see `FirstAttempts`). The threat alert's first
 * step uses it too.
 */
export function firstAttempts({
  sender,
  outcomes,
}: Pick<AlertDeliveryDeps, 'sender' | 'outcomes'>) {
  return async (
    alert: AlertContext,
    read: ReadTargets,
    {
      routed,
      requestId,
      sealWith,
    }: {
      routed: RoutedAlert;
      requestId?: string;
      /** Sealed in the same append as the outcomes, when they are recorded here. */
      sealWith?: EvidenceInput[];
    },
  ): Promise<FirstAttempts> => {
    const payload = parsePayload(alert.payload);
    const targets = read.route(routed);
    const reports: Record<string, AttemptReport> = {};
    /** The same reports by delivery id, as the outcome record takes each last attempt. */
    const byDelivery: Record<string, AttemptReport> = {};
    const results: ChannelResult[] = await Promise.all(
      targets.map(async ({ channelId, kind, skip }): Promise<ChannelResult> => {
        const deliveryId = deliveryIdOf(alert.workflowId, channelId);
        const base = { channelId, kind, deliveryId };
        if (skip) return { ...base, outcome: 'skipped', error: skip };
        const label = { deliveryId, attempt: 1, kind, requestId };
        const report = await reported(label, async (now) => {
          const outgoing: OutgoingAlert = {
            payload,
            deliveryId: alert.resendOf ?? deliveryId,
            now,
          };
          try {
            return await sender.attemptWith(channelId, read.sending(channelId), outgoing);
          } catch (err) {
            // No answer to classify (a fault of this worker's): tried again like a network error.
            const error = err instanceof Error ? err.message : 'delivery failed';
            return { verdict: 'retry', status: null, error };
          }
        });
        reports[channelId] = byDelivery[deliveryId] = report;
        return channelResult(base, report);
      }),
    );
    const retried = results.filter((result) => byDelivery[result.deliveryId]?.verdict === 'retry');
    if (!retried.length) {
      const recorded = await landed(() =>
        outcomes.record(alert, results, byDelivery, {
          sealWith,
          read: (channelId) => read.sending(channelId).channel ?? null,
        }),
      );
      return { targets, reports, recorded: recorded ? 'outcomes' : 'none' };
    }
    const recorded = await landed(async () => {
      await Promise.all(
        retried.map(({ channelId, deliveryId }) =>
          outcomes.recordAttempt(
            {
              accountId: alert.accountId,
              channelId,
              deliveryId,
              workflowId: alert.workflowId,
              event: alert.event,
              threatEventId: alert.threatEventId,
            },
            byDelivery[deliveryId]!,
          ),
        ),
      );
    });
    return { targets, reports, recorded: recorded ? 'attempts' : 'none' };
  };
}

export function alertDeliveryActivities({ targets, sender, outcomes }: AlertDeliveryDeps) {
  const firstOf = firstAttempts({ sender, outcomes });
  return {
    /** The channels that receive an alert (see `DeliveryTargets`). */
    async listDeliveryTargets(
      accountId: string,
      channelIds: string[] | undefined,
      alert: RoutedAlert,
    ): Promise<DeliveryTarget[]> {
      return (await targets.read(accountId, channelIds)).route(alert);
    },

    /**
     * An alert's first step: its targets read, the first attempt to each, and their record (see
     * `FirstAttempts`). A delivered alert needs no other step.
     */
    async sendFirstAttempts(input: {
      alert: AlertContext;
      /** The chosen channels (a test, a resend, a digest); absent: those the alert routes to. */
      channelIds?: string[];
      routed: RoutedAlert;
      requestId?: string;
    }): Promise<FirstAttempts> {
      const { alert, channelIds, ...options } = input;
      return firstOf(alert, await targets.read(alert.accountId, channelIds), options);
    },

    /**
     * One attempt after the first (the channel read again), reported (never thrown) whatever the
     * receiver answered; writes nothing (recording is the workflow's next step).
     */
    async sendAlertAttempt(
      input: AttemptLabel & {
        accountId: string;
        channelId: string;
        /** A resend: the delivery id receivers saw first, sent again. */
        resendOf?: string;
        payload: AlertPayloadJson;
      },
    ): Promise<AttemptReport> {
      const payload = parsePayload(input.payload);
      return reported(input, (now) =>
        sender.attempt(input.accountId, input.channelId, {
          payload,
          deliveryId: input.resendOf ?? input.deliveryId,
          now,
        }),
      );
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
