import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Temporal } from '../temporal/client';
import type { alertWorkflow } from '../../workflows';
import {
  HITS_SIGNAL,
  searchAttributes,
  type AlertInput,
  type AlertResult,
} from '../../workflows/shared';

const TRIPWIRE_EVENT = 'canary.tripwire_triggered';

function startOptions(temporal: Temporal, workflowId: string, input: AlertInput) {
  const event = input.payload?.event ?? TRIPWIRE_EVENT;
  const threatEventId = input.threat?.threatEventId ?? input.payload?.data.threatEventId;
  return {
    taskQueue: temporal.taskQueue,
    workflowId,
    args: [input] as [AlertInput],
    // A finished alert is never run again under its id: a late start delivers nothing twice.
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    memo: { accountId: input.accountId, requestId: input.requestId ?? null },
    typedSearchAttributes: [
      { key: searchAttributes.accountId, value: input.accountId },
      { key: searchAttributes.alertEvent, value: event },
      ...(threatEventId ? [{ key: searchAttributes.threatEventId, value: threatEventId }] : []),
    ],
  };
}

/**
 * Starts the delivery of a ready alert: workflow id `alert-<threatEventId>`, so starting it again
 * for the same event delivers nothing twice.
 */
export async function startAlert(
  temporal: Temporal,
  input: AlertInput & { threatEventId: string },
) {
  const workflowId = `alert-${input.threatEventId}`;
  try {
    await temporal.client.workflow.start<typeof alertWorkflow>(
      'alertWorkflow',
      startOptions(temporal, workflowId, input),
    );
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  return temporal.client.workflow.getHandle<typeof alertWorkflow>(workflowId);
}

/**
 * Tells a threat event's alert that `hits` more hits joined, starting it with the first ones.
 * Returns false when that alert has already gone out (the hits stay recorded on the event).
 */
export async function signalThreatAlert(
  temporal: Temporal,
  input: AlertInput & { threat: NonNullable<AlertInput['threat']> },
  hits: number,
): Promise<boolean> {
  try {
    await temporal.client.workflow.signalWithStart<typeof alertWorkflow, [number]>(
      'alertWorkflow',
      {
        ...startOptions(temporal, `alert-${input.threat.threatEventId}`, input),
        signal: HITS_SIGNAL,
        signalArgs: [hits],
      },
    );
    return true;
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw err;
  }
}

/** A channel test: the same workflow, attempts and timeouts as a real alert; waits for the outcome. */
export async function runChannelTest(temporal: Temporal, input: AlertInput): Promise<AlertResult> {
  const workflowId = `channel-test-${input.channelIds?.[0] ?? 'none'}-${randomUUID()}`;
  return temporal.client.workflow.execute<typeof alertWorkflow>('alertWorkflow', {
    ...startOptions(temporal, workflowId, input),
    workflowExecutionTimeout: '2m',
  });
}
