import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  defineSignal,
  patched,
  proxyActivities,
  proxyLocalActivities,
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

/**
 * Executions started before the bookkeeping ran as local activities (in the workflow task, with
 * no task of its own), before skips went unsent and before one write recorded every outcome:
 * they keep that path until they finish.
 */
const LOCAL_BOOKKEEPING = 'bookkeeping-local';

/**
 * Threat alerts started before leading-edge alerting waited for the storm to go quiet before
 * their one alert; since, the first hit is alerted at once and later hits in one follow-up.
 */
const LEADING_EDGE = 'leading-edge-alerts';
const FOLLOW_UP = ':follow-up';

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

/**
 * The same reads and writes as local activities: the worker runs them within the workflow task
 * that needs them, so they cost no task queue round trip and no workflow task of their own (the
 * Temporal server's work per task is what limits alerts per second on a small machine).
 */
const localBookkeeping = proxyLocalActivities<Activities>({
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

/** The hits signalled to a threat alert so far: each batch of a storm signals its count. */
function countHits(): { hits: number; started: number } {
  const storm = { hits: 0, started: Date.now() };
  setHandler(hitsSignal, (count) => {
    storm.hits += count;
  });
  return storm;
}

/** Storm control: returns once no hit came for `quietMs`, or `maxMs` after the alert started. */
async function untilQuiet(
  storm: { hits: number; started: number },
  { quietMs, maxMs }: { quietMs: number; maxMs: number },
): Promise<void> {
  for (;;) {
    const seen = storm.hits;
    const left = maxMs - (Date.now() - storm.started);
    if (left <= 0 || !(await condition(() => storm.hits !== seen, Math.min(quietMs, left)))) return;
  }
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
  const attemptsApart = patched(ATTEMPTS_APART);
  const local = attemptsApart && patched(LOCAL_BOOKKEEPING);
  const books = local ? localBookkeeping : bookkeeping;
  const path = { attemptsApart, local, books };
  if (!input.threat) {
    if (!input.payload) {
      throw ApplicationFailure.nonRetryable('an alert needs a payload or a threat event');
    }
    return { results: await deliverAlert(input, input.payload, path) };
  }
  const { threatEventId, gather } = input.threat;
  const storm = countHits();
  if (!(local && patched(LEADING_EDGE))) {
    // Before `LEADING_EDGE`: one alert, once the storm has gone quiet.
    await untilQuiet(storm, gather);
    const payload = await books.prepareThreatAlert({ threatEventId, hits: storm.hits });
    return { results: await deliverAlert(input, payload, path) };
  }
  // The first hit is alerted at once; the alert then stays open while the storm lasts, so later
  // hits signal it rather than start another, and they are summed up in one follow-up if any came.
  const reported = storm.hits;
  const first = await localBookkeeping.prepareThreatAlert({ threatEventId, hits: reported });
  const results = await deliverAlert(input, first, path);
  await untilQuiet(storm, gather);
  if (storm.hits > reported) {
    const followUp = await localBookkeeping.prepareStormFollowUp({
      threatEventId,
      hits: storm.hits,
      newHits: storm.hits - reported,
    });
    results.push(...(await deliverAlert(input, followUp, path, FOLLOW_UP)));
    upsertSearchAttributes([
      { key: searchAttributes.deliveryOutcome, value: alertOutcome(results) },
    ]);
  }
  return { results };
}

/**
 * One payload to every target channel in parallel, each attempt and each outcome recorded. A
 * storm's follow-up has its own delivery ids (`<workflowId>:<channelId>:follow-up`).
 */
async function deliverAlert(
  input: AlertInput,
  payload: AlertPayloadJson,
  {
    attemptsApart,
    local,
    books,
  }: { attemptsApart: boolean; local: boolean; books: typeof bookkeeping },
  suffix = '',
): Promise<ChannelResult[]> {
  const { workflowId } = workflowInfo();
  if (attemptsApart) {
    setCurrentDetails(describeAlert(input, payload));
    const { canaryId } = payload.data as { canaryId?: string };
    if (canaryId) upsertSearchAttributes([{ key: searchAttributes.canaryId, value: canaryId }]);
  }
  const data = payload.data as { alertLevel?: string };
  const targets = attemptsApart
    ? await books.listDeliveryTargets(input.accountId, input.channelIds, {
        event: payload.event,
        level: data.alertLevel ?? null,
      })
    : await books.listDeliveryTargets(input.accountId, input.channelIds);
  const alert = {
    accountId: input.accountId,
    workflowId,
    event: payload.event,
    threatEventId: payload.data.threatEventId,
  };

  const send = async (target: DeliveryTarget): Promise<ChannelResult> => {
    const deliveryId = `${workflowId}:${target.channelId}${suffix}`;
    const base = { channelId: target.channelId, kind: target.kind, deliveryId };
    if (target.skip) return { ...base, outcome: 'skipped', error: target.skip };
    if (attemptsApart) {
      return { ...base, ...(await attemptDelivery(input, payload, target, deliveryId, books)) };
    }
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
      return { ...base, outcome: 'delivered', status };
    } catch (err) {
      return { ...base, outcome: 'failed', ...failureMessage(err) };
    }
  };

  let results: ChannelResult[];
  if (local) {
    results = await Promise.all(targets.map(send));
    await localBookkeeping.recordAlertOutcomes({
      ...alert,
      results,
      payload,
      resendOf: input.resendOf ?? null,
    });
  } else {
    // Before `LOCAL_BOOKKEEPING`: one outcome activity per channel, skips included.
    results = await Promise.all(
      targets.map(async (target) => {
        const result = await send(target);
        await bookkeeping.recordDeliveryOutcome.executeWithOptions(
          attemptsApart ? { summary: `outcome of ${channelLabel(target)}: ${result.outcome}` } : {},
          [
            {
              ...alert,
              result,
              ...(attemptsApart && { payload, resendOf: input.resendOf ?? null }),
            },
          ],
        );
        return result;
      }),
    );
  }
  if (attemptsApart) {
    upsertSearchAttributes([
      { key: searchAttributes.deliveryOutcome, value: alertOutcome(results) },
    ]);
  }
  return results;
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
  books: typeof bookkeeping,
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
    await books.recordDeliveryAttempt.executeWithOptions(
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
