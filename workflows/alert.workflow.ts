import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  defineSignal,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  HITS_SIGNAL,
  DELIVERY_REJECTED,
  UNSAFE_TARGET,
  alertOutcome,
  searchAttributes,
  type AlertInput,
  type AlertPayloadJson,
  type AlertResult,
  type AttemptReport,
  type ChannelResult,
  type DeliveryTarget,
} from './shared';

/**
 * Executions started before attempts were recorded apart from sending: they run the old path
 * (Temporal retrying `deliverToChannel`, which records its own attempts) until they finish.
 */
const ATTEMPTS_APART = 'attempts-recorded-apart';

/** The spec's delivery semantics: 10 s per attempt, 3 attempts in all, exponential backoff. */
const MAX_ATTEMPTS = 3;
const backoffMs = (attempt: number) => 1_000 * 2 ** (attempt - 1);

/**
 * One attempt, never retried by Temporal: the workflow decides on the next one, so every attempt
 * is its own activity in the history, with its answer, and its bookkeeping is a separate step.
 */
const sending = proxyActivities<Activities>({
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 1 },
});

/** Before `ATTEMPTS_APART`: one attempt per activity attempt; refusals are final. */
const delivery = proxyActivities<Activities>({
  startToCloseTimeout: '10s',
  retry: {
    maximumAttempts: 3,
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '10s',
    nonRetryableErrorTypes: [DELIVERY_REJECTED, UNSAFE_TARGET],
  },
});

/** Reads and bookkeeping: retried until they succeed, so no outcome goes unrecorded. */
const bookkeeping = proxyActivities<Activities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});

function failureMessage(err: unknown): { error: string; status?: number | null } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const [details] = (cause.details ?? []) as [{ status?: number | null } | undefined];
    return { error: cause.message, status: details?.status };
  }
  return { error: cause instanceof Error ? cause.message : 'delivery failed' };
}

export const hitsSignal = defineSignal<[number]>(HITS_SIGNAL);

/**
 * Storm control: a threat alert waits while hits keep arriving (each batch signals its count), so
 * one alert reports them all; it goes out once none came for `quietMs`, or after `maxMs`.
 */
async function gatherHits(threat: NonNullable<AlertInput['threat']>): Promise<number> {
  let hits = 0;
  setHandler(hitsSignal, (count) => {
    hits += count;
  });
  const { quietMs, maxMs } = threat.gather;
  const started = Date.now();
  for (;;) {
    const seen = hits;
    const left = maxMs - (Date.now() - started);
    if (left <= 0 || !(await condition(() => hits !== seen, Math.min(quietMs, left)))) break;
  }
  return hits;
}

/** The channel as the Temporal UI's summaries name it. */
const channelLabel = (target: DeliveryTarget) =>
  `${target.kind} "${target.name ?? target.channelId}"`;

/** What the Temporal UI shows as the alert's current details once its payload is known. */
function describeAlert(input: AlertInput, payload: AlertPayloadJson): string {
  const data = payload.data as { alertLevel?: string; canaryId?: string };
  return [
    `**${data.alertLevel ?? '?'}** \`${payload.event}\``,
    `account \`${input.accountId}\` · canary \`${data.canaryId ?? '?'}\``,
    ...(payload.data.threatEventId ? [`threat event \`${payload.data.threatEventId}\``] : []),
    ...(input.resendOf ? [`resend of \`${input.resendOf}\``] : []),
  ].join('\n\n');
}

/**
 * One workflow per alert (`alert-<threatEventId>`, `channel-test-…` for a channel test,
 * `resend-…` for a resend): every target channel is delivered to in parallel, each attempt and
 * each outcome recorded.
 */
export async function alertWorkflow(input: AlertInput): Promise<AlertResult> {
  const { workflowId } = workflowInfo();
  const attemptsApart = patched(ATTEMPTS_APART);
  let payload: AlertPayloadJson;
  if (input.threat) {
    const hits = await gatherHits(input.threat);
    payload = await bookkeeping.prepareThreatAlert({
      threatEventId: input.threat.threatEventId,
      hits,
    });
  } else if (input.payload) {
    payload = input.payload;
  } else {
    throw ApplicationFailure.nonRetryable('an alert needs a payload or a threat event');
  }
  if (attemptsApart) {
    setCurrentDetails(describeAlert(input, payload));
    const { canaryId } = payload.data as { canaryId?: string };
    if (canaryId) upsertSearchAttributes([{ key: searchAttributes.canaryId, value: canaryId }]);
  }
  const data = payload.data as { alertLevel?: string };
  const targets = attemptsApart
    ? await bookkeeping.listDeliveryTargets(input.accountId, input.channelIds, {
        event: payload.event,
        level: data.alertLevel ?? null,
      })
    : await bookkeeping.listDeliveryTargets(input.accountId, input.channelIds);

  const deliver = async (target: DeliveryTarget): Promise<ChannelResult> => {
    const deliveryId = `${workflowId}:${target.channelId}`;
    const base = { channelId: target.channelId, kind: target.kind, deliveryId };
    let result: ChannelResult;
    if (target.skip) {
      result = { ...base, outcome: 'skipped', error: target.skip };
    } else if (attemptsApart) {
      result = { ...base, ...(await attemptDelivery(input, payload, target, deliveryId)) };
    } else {
      try {
        const { status } = await delivery.deliverToChannel({
          accountId: input.accountId,
          channelId: target.channelId,
          deliveryId,
          workflowId,
          payload,
          kind: target.kind,
          requestId: input.requestId,
        });
        result = { ...base, outcome: 'delivered', status };
      } catch (err) {
        result = { ...base, outcome: 'failed', ...failureMessage(err) };
      }
    }
    await bookkeeping.recordDeliveryOutcome.executeWithOptions(
      attemptsApart ? { summary: `outcome of ${channelLabel(target)}: ${result.outcome}` } : {},
      [
        {
          accountId: input.accountId,
          workflowId,
          event: payload.event,
          threatEventId: payload.data.threatEventId,
          result,
          ...(attemptsApart && { payload, resendOf: input.resendOf ?? null }),
        },
      ],
    );
    return result;
  };

  const results = await Promise.all(targets.map(deliver));
  if (attemptsApart) {
    upsertSearchAttributes([
      { key: searchAttributes.deliveryOutcome, value: alertOutcome(results) },
    ]);
  }
  return { results };
}

/**
 * Up to three attempts, each sent by one activity and recorded by another: a receiver's 2xx is
 * kept even when the database is down at that moment (the record is retried until it lands).
 */
async function attemptDelivery(
  input: AlertInput,
  payload: AlertPayloadJson,
  target: DeliveryTarget,
  deliveryId: string,
): Promise<Pick<ChannelResult, 'outcome' | 'status' | 'error'>> {
  const { workflowId } = workflowInfo();
  const label = channelLabel(target);
  let report: AttemptReport;
  for (let attempt = 1; ; attempt++) {
    const sendInput = {
      accountId: input.accountId,
      channelId: target.channelId,
      deliveryId,
      resendOf: input.resendOf,
      attempt,
      payload,
      kind: target.kind,
      requestId: input.requestId,
    };
    const at = new Date().toISOString();
    try {
      report = await sending.sendAlertAttempt.executeWithOptions(
        { summary: `send to ${label}, attempt ${attempt} of ${MAX_ATTEMPTS}` },
        [sendInput],
      );
    } catch (err) {
      // The activity reports every answer and refusal; a failure here means no report came back
      // (the worker was lost, or the attempt ran past its 10 s): retried like a network error.
      const { error } = failureMessage(err);
      report = { attempt, at, durationMs: 0, verdict: 'retry', status: null, error, answer: null };
    }
    await bookkeeping.recordDeliveryAttempt.executeWithOptions(
      { summary: `record attempt ${attempt} to ${label}: ${report.status ?? report.verdict}` },
      [
        {
          accountId: input.accountId,
          channelId: target.channelId,
          deliveryId,
          workflowId,
          event: payload.event,
          threatEventId: payload.data.threatEventId,
          report,
        },
      ],
    );
    if (report.verdict !== 'retry' || attempt >= MAX_ATTEMPTS) break;
    await sleep(backoffMs(attempt), { summary: `pause before attempt ${attempt + 1} to ${label}` });
  }
  return report.verdict === 'delivered'
    ? { outcome: 'delivered', status: report.status }
    : { outcome: 'failed', status: report.status, error: report.error ?? 'delivery failed' };
}
