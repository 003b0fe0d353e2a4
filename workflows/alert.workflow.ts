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

/**
 * Alerts started before each attempt was sent by a local activity, its last attempt recorded with
 * the outcomes, and a canary id already set at start left alone: they keep sending from the task
 * queue until they finish. An execution with this patch has every patch above (see below).
 */
const LOCAL_DELIVERY = 'delivery-local';

/**
 * Threat alerts started before their first payload and its channels were read together (one
 * local activity, `prepareThreatDelivery`) prepare it first and read the channels after. An
 * execution with this patch has every patch above.
 */
const TARGETS_WITH_PAYLOAD = 'targets-with-payload';

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

/**
 * The same attempt as a local activity: the worker sends it within the workflow task that asks for
 * it, so a delivered alert takes one workflow task in all and no activity task (the Temporal
 * server's work per task is what limits alerts per second). Still 10 s, one try per attempt, the
 * workflow deciding on the next; a worker lost mid-attempt sends that attempt again under the same
 * delivery id, as a timed-out activity's next attempt would.
 */
const localSending = proxyLocalActivities<Activities>({
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
  // The newest patch is asked first: an execution that has it has every older one too, so it
  // records one patch marker (and the one `TemporalChangeVersion` upsert the SDK adds to each)
  // rather than three or four. Older executions find no newer marker and ask as before.
  const withTargets = patched(TARGETS_WITH_PAYLOAD);
  const localDelivery = withTargets || patched(LOCAL_DELIVERY);
  const attemptsApart = localDelivery || patched(ATTEMPTS_APART);
  const local = localDelivery || (attemptsApart && patched(LOCAL_BOOKKEEPING));
  const books = local ? localBookkeeping : bookkeeping;
  const path = { attemptsApart, local, localDelivery, books };
  if (!input.threat) {
    if (!input.payload) {
      throw ApplicationFailure.nonRetryable('an alert needs a payload or a threat event');
    }
    return { results: await deliverAlert(input, input.payload, path) };
  }
  const { threatEventId, gather } = input.threat;
  const storm = countHits();
  if (!(localDelivery || (local && patched(LEADING_EDGE)))) {
    // Before `LEADING_EDGE`: one alert, once the storm has gone quiet.
    await untilQuiet(storm, gather);
    const payload = await books.prepareThreatAlert({ threatEventId, hits: storm.hits });
    return { results: await deliverAlert(input, payload, path) };
  }
  // The first hit is alerted at once; the alert then stays open while the storm lasts, so later
  // hits signal it rather than start another, and they are summed up in one follow-up if any came.
  const reported = storm.hits;
  let results: ChannelResult[];
  if (localDelivery) {
    // Since `LOCAL_DELIVERY` the first alert is sealed in the evidence log (and kept on its event)
    // beside its delivery, not before it: the seal is retried until it lands, and the alert ends
    // only once it has.
    let first: AlertPayloadJson;
    let targets: DeliveryTarget[] | undefined;
    if (withTargets) {
      ({ payload: first, targets } = await localBookkeeping.prepareThreatDelivery({
        accountId: input.accountId,
        threatEventId,
        canaryId: input.threat.canaryId,
        hits: reported,
        channelIds: input.channelIds,
      }));
    } else {
      first = await localBookkeeping.prepareThreatAlert({
        threatEventId,
        hits: reported,
        sealApart: true,
      });
    }
    [, results] = await Promise.all([
      localBookkeeping.sealThreatAlert({
        accountId: input.accountId,
        payload: first,
        hits: Math.max(reported, 1),
      }),
      deliverAlert(input, first, path, { targets }),
    ]);
  } else {
    const first = await localBookkeeping.prepareThreatAlert({ threatEventId, hits: reported });
    results = await deliverAlert(input, first, path);
  }
  await untilQuiet(storm, gather);
  if (storm.hits > reported) {
    const followUp = await localBookkeeping.prepareStormFollowUp({
      threatEventId,
      hits: storm.hits,
      newHits: storm.hits - reported,
    });
    results.push(...(await deliverAlert(input, followUp, path, { suffix: FOLLOW_UP })));
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
    localDelivery,
    books,
  }: {
    attemptsApart: boolean;
    local: boolean;
    localDelivery: boolean;
    books: typeof bookkeeping;
  },
  /** `targets`: already read with the payload. */
  { suffix = '', targets: read }: { suffix?: string; targets?: DeliveryTarget[] } = {},
): Promise<ChannelResult[]> {
  const { workflowId, typedSearchAttributes } = workflowInfo();
  if (attemptsApart) {
    setCurrentDetails(describeAlert(input, payload));
    const { canaryId } = payload.data as { canaryId?: string };
    // Since `LOCAL_DELIVERY`, a canary id the start already set is not upserted again.
    const known = localDelivery && typedSearchAttributes.get(searchAttributes.canaryId);
    if (canaryId && canaryId !== known) {
      upsertSearchAttributes([{ key: searchAttributes.canaryId, value: canaryId }]);
    }
  }
  const data = payload.data as { alertLevel?: string };
  const targets =
    read ??
    (attemptsApart
      ? await books.listDeliveryTargets(input.accountId, input.channelIds, {
          event: payload.event,
          level: data.alertLevel ?? null,
        })
      : await books.listDeliveryTargets(input.accountId, input.channelIds));
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
      const { last, ...outcome } = await attemptDelivery(input, payload, target, deliveryId, {
        books,
        localDelivery,
      });
      if (last) lastAttempts[deliveryId] = last;
      return { ...base, ...outcome };
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

  // Since `LOCAL_DELIVERY`, each delivery's last attempt is recorded with the outcomes.
  const lastAttempts: Record<string, AttemptReport> = {};
  let results: ChannelResult[];
  if (local) {
    results = await Promise.all(targets.map(send));
    const outcomes = {
      ...alert,
      results,
      payload,
      resendOf: input.resendOf ?? null,
    };
    if (localDelivery) {
      const summary = results
        .map((r, i) => `${channelLabel(targets[i]!)}: ${r.status ?? r.outcome}`)
        .join(', ');
      await localBookkeeping.recordAlertOutcomes.executeWithOptions(
        { summary: `record outcomes: ${summary}` },
        [{ ...outcomes, lastAttempts }],
      );
    } else {
      await localBookkeeping.recordAlertOutcomes(outcomes);
    }
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
  { books, localDelivery }: { books: typeof bookkeeping; localDelivery: boolean },
): Promise<Pick<ChannelResult, 'outcome' | 'status' | 'error'> & { last?: AttemptReport }> {
  const send = localDelivery ? localSending : sending;
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
      report = await send.sendAlertAttempt.executeWithOptions(
        { summary: `send to ${label}, attempt ${attempt} of ${MAX_ATTEMPTS}` },
        [sendInput],
      );
    } catch (err) {
      // The activity reports every answer and refusal; a failure here means no report came back
      // (the worker was lost, or the attempt ran past its 10 s): retried like a network error.
      const { error } = failureMessage(err);
      report = { attempt, at, durationMs: 0, verdict: 'retry', status: null, error, answer: null };
    }
    const final = report.verdict !== 'retry' || attempt >= MAX_ATTEMPTS;
    // Since `LOCAL_DELIVERY` the last attempt goes into the outcome write: one write, no step.
    if (final && localDelivery) break;
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
    if (final) break;
    await sleep(backoffMs(attempt), { summary: `pause before attempt ${attempt + 1} to ${label}` });
  }
  const last = localDelivery ? { last: report } : {};
  return report.verdict === 'delivered'
    ? { outcome: 'delivered', status: report.status, ...last }
    : {
        outcome: 'failed',
        status: report.status,
        error: report.error ?? 'delivery failed',
        ...last,
      };
}
