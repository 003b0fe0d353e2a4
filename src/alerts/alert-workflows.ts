import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Temporal } from '../temporal/client';
import type { alertWorkflow } from '../../workflows';
import { searchAttributes, type AlertInput, type AlertResult } from '../../workflows/shared';

function startOptions(temporal: Temporal, workflowId: string, input: AlertInput) {
  return {
    taskQueue: temporal.taskQueue,
    workflowId,
    args: [input] as [AlertInput],
    memo: { accountId: input.accountId, requestId: input.requestId ?? null },
    typedSearchAttributes: [
      { key: searchAttributes.accountId, value: input.accountId },
      { key: searchAttributes.alertEvent, value: input.payload.event },
      ...(input.payload.data.threatEventId
        ? [{ key: searchAttributes.threatEventId, value: input.payload.data.threatEventId }]
        : []),
    ],
  };
}

/**
 * Starts the delivery of a real alert: workflow id `alert-<threatEventId>`, so starting it again
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

/** A channel test: the same workflow, attempts and timeouts as a real alert; waits for the outcome. */
export async function runChannelTest(temporal: Temporal, input: AlertInput): Promise<AlertResult> {
  const workflowId = `channel-test-${input.channelIds?.[0] ?? 'none'}-${randomUUID()}`;
  return temporal.client.workflow.execute<typeof alertWorkflow>('alertWorkflow', {
    ...startOptions(temporal, workflowId, input),
    workflowExecutionTimeout: '2m',
  });
}
