import {
  ActivityFailure,
  ApplicationFailure,
  proxyLocalActivities,
  setCurrentDetails,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ALERT_BOOKKEEPING, FIRST_ATTEMPTS, ONE_SEND_ATTEMPT } from './activity-options';
import {
  ALERT_NOT_DELIVERED,
  alertOutcome,
  channelResult,
  deliveryIdOf,
  searchAttributes,
  type AlertInput,
  type AlertPayloadJson,
  type AlertResult,
  type AttemptReport,
  type ChannelResult,
  type DeliveryTarget,
  type FirstAttempts,
  type RecoveringInput,
  type StormFollowUpInput,
  type ThreatAlertInput,
  type ThreatFirstAttempts,
  isAlert,
  UNMARKED_OUTCOME,
} from './shared';

/** The spec's delivery semantics: 3 attempts in all, exponential backoff between them. */
const MAX_ATTEMPTS = 3;
const backoffMs = (attempt: number) => 1_000 * 2 ** (attempt - 1);

/**
 * A pause made up to a quarter longer, by a hash of `key` (the delivery id and the step): the
 * retries of many alerts to one receiver that came back spread out instead of arriving at once.
 * A hash, not `Math.random()`: the tracing interceptors draw from the workflow's seeded random
 * source too, so a draw here would make recorded histories replay differently when traced.
 */
function jittered(ms: number, key: string): number {
  let hash = 0x811c9dc5; // FNV-1a, 32 bits
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return Math.round(ms * (1 + (hash >>> 0) / 2 ** 34));
}

const sending = proxyLocalActivities<Activities>(ONE_SEND_ATTEMPT);
const firstStep = proxyLocalActivities<Activities>(FIRST_ATTEMPTS);
const books = proxyLocalActivities<Activities>(ALERT_BOOKKEEPING);

/**
 * One workflow per alert (`alert-<threatEventId>`, `channel-test-…` for a channel test,
 * `resend-…` for a resend): every target channel is delivered to in parallel, each attempt and
 * each outcome recorded.
 */
export async function alertWorkflow(input: AlertInput): Promise<AlertResult> {
  const results =
    input.kind === 'threat'
      ? await threatAlert(input)
      : input.kind === 'follow-up'
        ? await stormFollowUp(input)
        : await deliverAlert(input, input.payload);
  const outcome = alertOutcome(results);
  // Only an alert that did not reach every channel is marked: a completed alert without the
  // attribute was delivered. Each upsert is a visibility write of its own in Temporal (about 7 % of
  // a one-step workflow's CPU), which the alerts that need no one's attention are spared.
  // Set once every branch is done: a command right after a local activity's resolution may change
  // places, on replay, with one another branch emitted in the same workflow task.
  if (outcome !== UNMARKED_OUTCOME) {
    upsertSearchAttributes([{ key: searchAttributes.deliveryOutcome, value: outcome }]);
  }
  // An alert that reached none of its channels fails, so the Temporal UI's list shows it red; a
  // partial one completes as `partly_failed`.
  if (isAlert(input) && outcome === 'failed') {
    throw ApplicationFailure.create({
      type: ALERT_NOT_DELIVERED,
      nonRetryable: true,
      // Every channel's outcome, as a completed alert returns them.
      details: [{ results } satisfies AlertResult],
      message: `no channel got the alert: ${results
        .filter((r) => r.outcome === 'failed')
        .map((r) => `${r.kind} ${r.channelId}: ${r.error}`)
        .join('; ')}`,
    });
  }
  return { results };
}

/** A workflow's first task is handed three events (its start, the task scheduled, the task started). */
const FIRST_TASK_HISTORY_LENGTH = 3;

/** How often a follow-up looks again for the end of its first alert's round, once gathering is over. */
const FIRST_ROUND_POLL_MS = 5_000;

/**
 * The first hit is alerted at once, and the alert ends with its round and any recovery: an alert
 * whose first attempts all land is one workflow task. Its storm's later hits are the follow-up's
 * (`stormFollowUp`), which the API starts when it records the first of them.
 */
async function threatAlert(input: ThreatAlertInput): Promise<ChannelResult[]> {
  const prepare = {
    accountId: input.accountId,
    threatEventId: input.threatEventId,
    canaryId: input.canaryId,
    event: input.event,
    // A later task (the worker was lost mid-step) reads the event: a payload kept there is reused.
    fresh: workflowInfo().historyLength <= FIRST_TASK_HISTORY_LENGTH,
  };
  // One step prepares, seals and sends; if it fails, the same in separate steps, each retried.
  let sent: ThreatFirstAttempts | undefined;
  try {
    sent = await firstStep.sendThreatAlert.executeWithOptions(
      { summary: 'prepare and seal the alert, send its first attempt to every channel' },
      [{ ...prepare, workflowId: workflowInfo().workflowId, requestId: input.requestId }],
    );
  } catch {
    // Made in separate steps below.
  }
  const { payload, targets, hits } =
    sent ?? (await books.prepareThreatDelivery({ ...prepare, fresh: false }));
  // The first alert is sealed in the evidence log (and kept on its event) beside its delivery:
  // the seal is retried until it lands, and the alert ends only once it has.
  const [, results] = await Promise.all([
    sent?.sealed || books.sealThreatAlert({ accountId: input.accountId, payload, hits }),
    deliverRound(input, payload, sent ? { first: sent } : { targets }).then((round) =>
      recoverFailed(input, payload, round),
    ),
  ]);
  return results;
}

/**
 * A storm's later hits in one follow-up, once the storm is quiet and the first alert's round is
 * over (see `untilQuiet`): the same event reporting every hit so far. Nothing when no hit came
 * after the hits the first alert reported.
 */
async function stormFollowUp(input: StormFollowUpInput): Promise<ChannelResult[]> {
  const { hits, reported } = await untilQuiet(input);
  if (hits <= reported) return [];
  const payload = await books.prepareStormFollowUp({
    threatEventId: input.threatEventId,
    hits,
    newHits: hits - reported,
  });
  return deliverAlert(input, payload);
}

/**
 * Storm control: the event's count once a whole `quietMs` period passed in which it did not grow
 * past what was seen before (at first, the hits the first alert reported), or after `maxMs` of
 * such periods; and not before the first alert's round is over (its attempts and their record,
 * not its recovery), so a follow-up never reaches a channel before the alert it follows. One
 * timer and one read of the event per period, whatever the hits: a flood's workflow tasks are
 * bounded by time. The periods are counted, not measured against the workflow's clock: after a
 * local activity that outlasted a workflow task, the time a replay sees need not be the time the
 * live run saw, so no step may depend on it.
 */
async function untilQuiet({
  threatEventId,
  gather: { quietMs, maxMs },
}: StormFollowUpInput): Promise<{ hits: number; reported: number }> {
  const periods = quietMs > 0 ? Math.ceil(maxMs / quietMs) : 0;
  let seen: number | undefined;
  for (let period = 1; ; period++) {
    if (period <= periods) {
      await sleep(quietMs, { summary: `storm: quiet period ${period} of at most ${periods}` });
    } else if (period > 1) {
      await sleep(FIRST_ROUND_POLL_MS, { summary: "storm: waiting for the first alert's round" });
    }
    const { hits, reported } = await books.stormHits.executeWithOptions(
      { summary: `storm: hits after period ${period}` },
      [threatEventId],
    );
    if (reported === null) continue;
    if (hits <= (seen ?? reported) || period >= periods) return { hits, reported };
    seen = hits;
  }
}

/** The channel as the Temporal UI's summaries name it. */
const channelLabel = (target: DeliveryTarget) => `${target.kind} "${target.name}"`;

/** What the Temporal UI shows as the alert's current details once its payload is known. */
function describeAlert(input: AlertInput, payload: AlertPayloadJson): string {
  const data = payload.data as { alertLevel?: string; canaryId?: string };
  return [
    `**${data.alertLevel ?? '?'}** \`${payload.event}\``,
    `account \`${input.accountId}\` · canary \`${data.canaryId ?? '?'}\``,
    ...(payload.data.threatEventId ? [`threat event \`${payload.data.threatEventId}\``] : []),
    ...(input.kind === 'resend' ? [`resend of \`${input.resendOf}\``] : []),
  ].join('\n\n');
}

/** One round to every target, then each failed delivery's recovery (see `deliverRound`). */
function deliverAlert(input: AlertInput, payload: AlertPayloadJson): Promise<ChannelResult[]> {
  return deliverRound(input, payload).then((round) => recoverFailed(input, payload, round));
}

/** What one round came to: the targets read for it and each one's result. */
interface Round {
  targets: DeliveryTarget[];
  results: ChannelResult[];
}

const routeOf = (payload: AlertPayloadJson) => ({
  event: payload.event,
  level: (payload.data as { alertLevel?: string }).alertLevel ?? null,
});

/**
 * One payload to every target channel in parallel, then every outcome in one record, each
 * delivery's last attempt with it. The first attempts are one step (`sendFirstAttempts`, or for
 * a threat alert `sendThreatAlert`), which records them too: a round whose first attempts are
 * all final is that one step. Only a delivery whose attempt is to be retried takes further steps
 * (a pause, the next attempt, …, then the outcome record). If the first step fails (the database
 * down when it read the targets, the worker lost), the round is made in separate steps: the
 * targets read, then each attempt its own step.
 */
async function deliverRound(
  input: AlertInput,
  payload: AlertPayloadJson,
  /** `first`: the first step's result; `targets`: already read (and nothing sent yet). */
  known: { first?: FirstAttempts; targets?: DeliveryTarget[] } = {},
): Promise<Round> {
  const { workflowId, typedSearchAttributes } = workflowInfo();
  setCurrentDetails(describeAlert(input, payload));
  const { canaryId } = payload.data as { canaryId?: string };
  if (canaryId && canaryId !== typedSearchAttributes.get(searchAttributes.canaryId)) {
    upsertSearchAttributes([{ key: searchAttributes.canaryId, value: canaryId }]);
  }
  const routed = routeOf(payload);
  const channelIds =
    input.kind === 'resend' || input.kind === 'test'
      ? [input.channelId]
      : input.kind === 'digest'
        ? input.channelIds
        : undefined;
  let first = known.first;
  if (!first && !known.targets) {
    try {
      first = await firstStep.sendFirstAttempts.executeWithOptions(
        {
          summary: `send the ${input.kind === 'follow-up' ? 'follow-up' : 'alert'}: first attempt to every channel`,
        },
        [
          {
            alert: alertContext(input, payload),
            channelIds,
            routed,
            requestId: input.requestId,
          },
        ],
      );
    } catch {
      // Made in separate steps below: the targets read, then each attempt.
    }
  }
  const targets =
    first?.targets ??
    known.targets ??
    (await books.listDeliveryTargets(input.accountId, channelIds, routed));

  const lastAttempts: Record<string, AttemptReport> = {};
  const results: ChannelResult[] = [];
  // A delivery whose first attempt is final is done here, with no promise (the SDK traces every
  // promise made in workflow code); only one to retry takes further steps.
  const retrying: Promise<void>[] = [];
  const made = first;
  targets.forEach((target, i) => {
    const deliveryId = deliveryIdOf(workflowId, target.channelId);
    const base = { channelId: target.channelId, kind: target.kind, deliveryId };
    const done = (last: AttemptReport) => {
      lastAttempts[deliveryId] = last;
      results[i] = channelResult(base, last);
    };
    const report = made?.reports[target.channelId];
    if (target.skip) results[i] = { ...base, outcome: 'skipped', error: target.skip };
    else if (report && report.verdict !== 'retry') done(report);
    else {
      retrying.push(
        attemptDelivery(input, payload, target, deliveryId, {
          ...(report && { first: { report, recorded: made?.recorded !== 'none' } }),
        }).then(done),
      );
    }
  });
  if (retrying.length) await Promise.all(retrying);
  if (first?.recorded !== 'outcomes') {
    await recordOutcomes(input, payload, targets, results, lastAttempts);
  }
  // What each channel's delivery came to, for the Temporal UI (the first step's summary is
  // written before its targets are known).
  setCurrentDetails(
    [describeAlert(input, payload), `outcomes: ${outcomesLine(targets, results)}`].join('\n\n'),
  );
  return { targets, results };
}

/**
 * Each failed delivery of an alert's round, recovering on its own (see `recoverDelivery`); the
 * round's results as they are (no promise) when there is nothing to recover.
 */
function recoverFailed(
  input: AlertInput,
  payload: AlertPayloadJson,
  { targets, results }: Round,
): ChannelResult[] | Promise<ChannelResult[]> {
  if (!isAlert(input) || !input.recoveryMs.length || !results.some((r) => r.outcome === 'failed')) {
    return results;
  }
  const alert = input;
  return Promise.all(
    results.map(async (result, i) =>
      result.outcome === 'failed'
        ? recoverDelivery(alert, payload, targets[i]!, result, routeOf(payload))
        : result,
    ),
  );
}

/**
 * A failed delivery delivered again after each pause of the recovery schedule, each time up to
 * three attempts under the same delivery id (numbered on: 4–6, 7–9, …), each round recorded like
 * the first, until one is delivered, the channel is disabled or gone, or the schedule ends.
 */
async function recoverDelivery(
  input: RecoveringInput,
  payload: AlertPayloadJson,
  target: DeliveryTarget,
  failed: ChannelResult,
  routed: { event: string; level: string | null },
): Promise<ChannelResult> {
  const schedule = input.recoveryMs;
  const label = channelLabel(target);
  let result = failed;
  for (let round = 1; round <= schedule.length && result.outcome === 'failed'; round++) {
    await sleep(jittered(schedule[round - 1]!, `${result.deliveryId}:recovery-${round}`), {
      summary: `pause before recovery ${round} of ${schedule.length} to ${label}`,
    });
    const current = (await books.listDeliveryTargets(input.accountId, undefined, routed)).find(
      (t) => t.channelId === target.channelId,
    );
    if (!current || current.skip) return result;
    const last = await attemptDelivery(input, payload, target, result.deliveryId, {
      recovery: round,
    });
    result = channelResult(result, last);
    await recordOutcomes(input, payload, [target], [result], { [result.deliveryId]: last }, round);
  }
  return result;
}

/** What every outcome record of the alert shares (`AlertContext`). */
function alertContext(input: AlertInput, payload: AlertPayloadJson) {
  return {
    accountId: input.accountId,
    workflowId: workflowInfo().workflowId,
    event: payload.event,
    threatEventId: payload.data.threatEventId,
    payload,
    resendOf: input.kind === 'resend' ? input.resendOf : null,
  };
}

/** `webhook "Ops": 200, email "account email": skipped`: each target's result, in order. */
const outcomesLine = (targets: DeliveryTarget[], results: ChannelResult[]) =>
  results.map((r, i) => `${channelLabel(targets[i]!)}: ${r.status ?? r.outcome}`).join(', ');

/** The outcomes of one round in one record (see `AlertOutcomes.record`). */
async function recordOutcomes(
  input: AlertInput,
  payload: AlertPayloadJson,
  targets: DeliveryTarget[],
  results: ChannelResult[],
  lastAttempts: Record<string, AttemptReport>,
  recovery = 0,
): Promise<void> {
  const summary = outcomesLine(targets, results);
  await books.recordAlertOutcomes.executeWithOptions(
    { summary: `record ${recovery ? `recovery ${recovery} ` : ''}outcomes: ${summary}` },
    [{ ...alertContext(input, payload), ...(recovery && { recovery }), results, lastAttempts }],
  );
}

/**
 * Up to three attempts: the first as the round's first step made it (`first`), or each sent by a
 * local activity of its own; every attempt but the last is recorded (the last goes into the
 * outcome record). A receiver's 2xx is kept even when the database is down at that moment: the
 * record is retried until it lands.
 */
async function attemptDelivery(
  input: AlertInput,
  payload: AlertPayloadJson,
  target: DeliveryTarget,
  deliveryId: string,
  {
    recovery = 0,
    first,
  }: {
    /** The recovery round (0: the first delivery); its attempts are numbered after the earlier. */
    recovery?: number;
    /** The first attempt, already made, and whether it is recorded. */
    first?: { report: AttemptReport; recorded: boolean };
  } = {},
): Promise<AttemptReport> {
  const { workflowId } = workflowInfo();
  const label = channelLabel(target);
  const round = recovery ? ` (recovery ${recovery})` : '';
  for (let step = 1; ; step++) {
    const attempt = recovery * MAX_ATTEMPTS + step;
    const made = step === 1 ? first : undefined;
    const report =
      made?.report ??
      (await sendAttempt(
        input,
        payload,
        target,
        deliveryId,
        attempt,
        `${step} of ${MAX_ATTEMPTS}${round}`,
      ));
    if (report.verdict !== 'retry' || step >= MAX_ATTEMPTS) return report;
    if (!made?.recorded) {
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
    }
    await sleep(jittered(backoffMs(step), `${deliveryId}:${attempt}`), {
      summary: `pause before attempt ${step + 1} to ${label}${round}`,
    });
  }
}

/** One attempt by a local activity of its own, reported whatever came of it. */
async function sendAttempt(
  input: AlertInput,
  payload: AlertPayloadJson,
  target: DeliveryTarget,
  deliveryId: string,
  attempt: number,
  /** `2 of 3 (recovery 1)`: for the Temporal UI. */
  which: string,
): Promise<AttemptReport> {
  const at = new Date().toISOString();
  try {
    return await sending.sendAlertAttempt.executeWithOptions(
      { summary: `send to ${channelLabel(target)}, attempt ${which}` },
      [
        {
          accountId: input.accountId,
          channelId: target.channelId,
          deliveryId,
          resendOf: input.kind === 'resend' ? input.resendOf : undefined,
          attempt,
          payload,
          kind: target.kind,
          requestId: input.requestId,
        },
      ],
    );
  } catch (err) {
    // The activity reports every answer and refusal; a failure here means no report came back
    // (the worker was lost, or the attempt ran past its 10 s): retried like a network error.
    return {
      attempt,
      at,
      durationMs: 0,
      verdict: 'retry',
      status: null,
      error: failure(err),
      answer: null,
    };
  }
}

function failure(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof Error ? cause.message : 'delivery failed';
}
