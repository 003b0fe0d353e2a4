import {
  ActivityFailure,
  condition,
  defineSignal,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { ALERT_BOOKKEEPING, ONE_SEND_ATTEMPT } from './activity-options';
import {
  HITS_SIGNAL,
  alertOutcome,
  searchAttributes,
  type AlertInput,
  type AlertPayloadJson,
  type AlertResult,
  type AttemptReport,
  type ChannelResult,
  type DeliveryTarget,
  type ThreatAlertInput,
} from './shared';

/** The spec's delivery semantics: 3 attempts in all, exponential backoff between them. */
const MAX_ATTEMPTS = 3;
const backoffMs = (attempt: number) => 1_000 * 2 ** (attempt - 1);

const FOLLOW_UP = ':follow-up';

const sending = proxyLocalActivities<Activities>(ONE_SEND_ATTEMPT);
const books = proxyLocalActivities<Activities>(ALERT_BOOKKEEPING);

export const hitsSignal = defineSignal<[number]>(HITS_SIGNAL);

/**
 * One workflow per alert (`alert-<threatEventId>`, `channel-test-…` for a channel test,
 * `resend-…` for a resend): every target channel is delivered to in parallel, each attempt and
 * each outcome recorded.
 */
export async function alertWorkflow(input: AlertInput): Promise<AlertResult> {
  if (input.kind === 'threat') return { results: await threatAlert(input) };
  return { results: await deliverAlert(input, input.payload) };
}

/**
 * The first hit is alerted at once; the alert then stays open while the storm lasts, so later
 * hits signal it rather than start another, and they are summed up in one follow-up if any came.
 */
async function threatAlert(input: ThreatAlertInput): Promise<ChannelResult[]> {
  const storm = countHits();
  const reported = storm.hits;
  const { payload, targets } = await books.prepareThreatDelivery({
    accountId: input.accountId,
    threatEventId: input.threatEventId,
    canaryId: input.canaryId,
    hits: reported,
  });
  // The first alert is sealed in the evidence log (and kept on its event) beside its delivery:
  // the seal is retried until it lands, and the alert ends only once it has.
  const [, results] = await Promise.all([
    books.sealThreatAlert({ accountId: input.accountId, payload, hits: Math.max(reported, 1) }),
    deliverAlert(input, payload, { targets }),
  ]);
  await untilQuiet(storm, input.gather);
  if (storm.hits > reported) {
    const followUp = await books.prepareStormFollowUp({
      threatEventId: input.threatEventId,
      hits: storm.hits,
      newHits: storm.hits - reported,
    });
    results.push(...(await deliverAlert(input, followUp, { suffix: FOLLOW_UP })));
    upsertSearchAttributes([
      { key: searchAttributes.deliveryOutcome, value: alertOutcome(results) },
    ]);
  }
  return results;
}

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
  { quietMs, maxMs }: ThreatAlertInput['gather'],
): Promise<void> {
  for (;;) {
    const seen = storm.hits;
    const left = maxMs - (Date.now() - storm.started);
    if (left <= 0 || !(await condition(() => storm.hits !== seen, Math.min(quietMs, left)))) return;
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

/**
 * One payload to every target channel in parallel, then every outcome in one record, each
 * delivery's last attempt with it. A storm's follow-up has its own delivery ids
 * (`<workflowId>:<channelId>:follow-up`).
 */
async function deliverAlert(
  input: AlertInput,
  payload: AlertPayloadJson,
  /** `targets`: already read with the payload. */
  { suffix = '', targets: read }: { suffix?: string; targets?: DeliveryTarget[] } = {},
): Promise<ChannelResult[]> {
  const { workflowId, typedSearchAttributes } = workflowInfo();
  setCurrentDetails(describeAlert(input, payload));
  const { canaryId, alertLevel } = payload.data as { canaryId?: string; alertLevel?: string };
  if (canaryId && canaryId !== typedSearchAttributes.get(searchAttributes.canaryId)) {
    upsertSearchAttributes([{ key: searchAttributes.canaryId, value: canaryId }]);
  }
  const targets =
    read ??
    (await books.listDeliveryTargets(
      input.accountId,
      input.kind === 'resend'
        ? [input.channelId]
        : input.kind === 'ready'
          ? input.channelIds
          : undefined,
      { event: payload.event, level: alertLevel ?? null },
    ));

  const lastAttempts: Record<string, AttemptReport> = {};
  const results = await Promise.all(
    targets.map(async (target): Promise<ChannelResult> => {
      const deliveryId = `${workflowId}:${target.channelId}${suffix}`;
      const base = { channelId: target.channelId, kind: target.kind, deliveryId };
      if (target.skip) return { ...base, outcome: 'skipped', error: target.skip };
      const last = await attemptDelivery(input, payload, target, deliveryId);
      lastAttempts[deliveryId] = last;
      return last.verdict === 'delivered'
        ? { ...base, outcome: 'delivered', status: last.status }
        : {
            ...base,
            outcome: 'failed',
            status: last.status,
            error: last.error ?? 'delivery failed',
          };
    }),
  );
  const summary = results
    .map((r, i) => `${channelLabel(targets[i]!)}: ${r.status ?? r.outcome}`)
    .join(', ');
  await books.recordAlertOutcomes.executeWithOptions({ summary: `record outcomes: ${summary}` }, [
    {
      accountId: input.accountId,
      workflowId,
      event: payload.event,
      threatEventId: payload.data.threatEventId,
      payload,
      resendOf: input.kind === 'resend' ? input.resendOf : null,
      results,
      lastAttempts,
    },
  ]);
  upsertSearchAttributes([{ key: searchAttributes.deliveryOutcome, value: alertOutcome(results) }]);
  return results;
}

/**
 * Up to three attempts, each sent by one local activity; every attempt but the last is recorded
 * by another (the last goes into the outcome record). A receiver's 2xx is kept even when the
 * database is down at that moment: the record is retried until it lands.
 */
async function attemptDelivery(
  input: AlertInput,
  payload: AlertPayloadJson,
  target: DeliveryTarget,
  deliveryId: string,
): Promise<AttemptReport> {
  const { workflowId } = workflowInfo();
  const label = channelLabel(target);
  for (let attempt = 1; ; attempt++) {
    const at = new Date().toISOString();
    let report: AttemptReport;
    try {
      report = await sending.sendAlertAttempt.executeWithOptions(
        { summary: `send to ${label}, attempt ${attempt} of ${MAX_ATTEMPTS}` },
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
      report = {
        attempt,
        at,
        durationMs: 0,
        verdict: 'retry',
        status: null,
        error: failure(err),
        answer: null,
      };
    }
    if (report.verdict !== 'retry' || attempt >= MAX_ATTEMPTS) return report;
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
    await sleep(backoffMs(attempt), { summary: `pause before attempt ${attempt + 1} to ${label}` });
  }
}

function failure(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof Error ? cause.message : 'delivery failed';
}
