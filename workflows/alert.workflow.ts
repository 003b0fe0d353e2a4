import {
  ActivityFailure,
  ApplicationFailure,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import {
  DELIVERY_REJECTED,
  UNSAFE_TARGET,
  type AlertInput,
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

function failureMessage(err: unknown): { error: string; status?: number } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const [details] = (cause.details ?? []) as [{ status?: number } | undefined];
    return { error: cause.message, status: details?.status };
  }
  return { error: cause instanceof Error ? cause.message : 'delivery failed' };
}

/**
 * One workflow per alert (`alert-<threatEventId>`, or `channel-test-…` for a channel test): every
 * target channel is delivered to in parallel, and each outcome is recorded once the attempts end.
 */
export async function alertWorkflow(input: AlertInput): Promise<AlertResult> {
  const { workflowId } = workflowInfo();
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
          payload: input.payload,
        });
        result = { ...base, outcome: 'delivered', status };
      } catch (err) {
        result = { ...base, outcome: 'failed', ...failureMessage(err) };
      }
    }
    await bookkeeping.recordDeliveryOutcome({
      accountId: input.accountId,
      workflowId,
      event: input.payload.event,
      threatEventId: input.payload.data.threatEventId,
      result,
    });
    return result;
  };

  return { results: await Promise.all(targets.map(deliver)) };
}
