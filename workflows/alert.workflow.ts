import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  defineSignal,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  HITS_SIGNAL,
  DELIVERY_REJECTED,
  UNSAFE_TARGET,
  type AlertInput,
  type AlertPayloadJson,
  type AlertResult,
  type ChannelResult,
  type DeliveryTarget,
} from './shared';

/** One delivery attempt: 10 s, 3 attempts in all, exponential backoff; refusals are final. */
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

/**
 * One workflow per alert (`alert-<threatEventId>`, or `channel-test-…` for a channel test): every
 * target channel is delivered to in parallel, and each outcome is recorded once the attempts end.
 */
export async function alertWorkflow(input: AlertInput): Promise<AlertResult> {
  const { workflowId } = workflowInfo();
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
  const targets = await bookkeeping.listDeliveryTargets(input.accountId, input.channelIds);

  const deliver = async (target: DeliveryTarget): Promise<ChannelResult> => {
    const deliveryId = `${workflowId}:${target.channelId}`;
    const base = { channelId: target.channelId, kind: target.kind, deliveryId };
    let result: ChannelResult;
    if (target.skip) {
      result = { ...base, outcome: 'skipped', error: target.skip };
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
    await bookkeeping.recordDeliveryOutcome({
      accountId: input.accountId,
      workflowId,
      event: payload.event,
      threatEventId: payload.data.threatEventId,
      result,
    });
    return result;
  };

  return { results: await Promise.all(targets.map(deliver)) };
}
