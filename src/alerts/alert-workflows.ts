import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Temporal } from '../temporal/client';
import type { alertWorkflow } from '../../workflows';
import {
  searchAttributes,
  type AlertInput,
  type AlertPayloadJson,
  type AlertResult,
  type ChannelTestInput,
  type ReadyAlertInput,
  type ResendInput,
  type StormFollowUpInput,
  type ThreatAlertInput,
  followUpIdOf,
} from '../../workflows/shared';

const TRIPWIRE_EVENT = 'canary.tripwire_triggered';
const TEST_EVENT = 'canary.test_alert';

/**
 * What the Temporal UI shows of an alert before it runs: a one-line summary and details with the
 * account, canary, event and level (a threat alert's level is known once the alert is prepared:
 * the workflow then shows it in its current details).
 */
function describeStart(input: AlertInput) {
  const ready = 'payload' in input ? input.payload : undefined;
  const data = ready?.data as { alertLevel?: string; canaryId?: string } | undefined;
  const event = ready ? ready.event : TRIPWIRE_EVENT;
  const threatEventId = 'threatEventId' in input ? input.threatEventId : ready!.data.threatEventId;
  const canaryId = 'threatEventId' in input ? input.canaryId : data?.canaryId;
  const channelIds = input.kind === 'resend' || input.kind === 'test' ? [input.channelId] : null;
  const level = data?.alertLevel;
  const what =
    input.kind === 'resend'
      ? `Resend of ${input.resendOf}`
      : input.kind === 'follow-up'
        ? 'Storm follow-up'
        : event === TRIPWIRE_EVENT
          ? `${level ?? 'Threat'} alert`
          : event === TEST_EVENT
            ? `Test alert to ${channelIds?.[0] ?? 'a channel'}`
            : `Notice ${event}`;
  const staticSummary = [what, canaryId && `canary ${canaryId}`].filter(Boolean).join(' · ');
  const staticDetails = [
    `**Account** \`${input.accountId}\``,
    `**Event** \`${event}\`${threatEventId ? ` · threat event \`${threatEventId}\`` : ''}`,
    `**Canary** \`${canaryId ?? 'none'}\` · **level** ${level ?? 'set when the alert is prepared'}`,
    ...(channelIds ? [`**Channels** ${channelIds.join(', ')}`] : []),
  ].join('\n\n');
  return { staticSummary, staticDetails, event, threatEventId, canaryId };
}

/** An alert's workflow options: its id, input, memo, search attributes and what the UI shows. */
export function alertStartOptions(temporal: Temporal, workflowId: string, input: AlertInput) {
  const { staticSummary, staticDetails, event, threatEventId, canaryId } = describeStart(input);
  return {
    staticSummary,
    staticDetails,
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
      ...(canaryId ? [{ key: searchAttributes.canaryId, value: canaryId }] : []),
    ],
  };
}

/**
 * Starts an alert's workflow once: one started already (by another replica, the reconciler, or
 * an earlier try) is left as it is, and REJECT_DUPLICATE keeps a finished one from running again.
 */
async function startOnce(temporal: Temporal, workflowId: string, input: AlertInput): Promise<void> {
  try {
    await temporal.client.workflow.start<typeof alertWorkflow>(
      'alertWorkflow',
      alertStartOptions(temporal, workflowId, input),
    );
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * Starts the delivery of a ready alert to every channel that subscribes to it: workflow id
 * `alert-<threatEventId>`, so starting it again for the same event delivers nothing twice.
 */
export async function startAlert(
  temporal: Temporal,
  input: Omit<ReadyAlertInput, 'kind' | 'recoveryMs'> & { threatEventId: string },
) {
  const { threatEventId, ...alert } = input;
  const workflowId = `alert-${threatEventId}`;
  const recoveryMs = temporal.alertRecoveryMs;
  await startOnce(temporal, workflowId, { kind: 'ready', ...alert, recoveryMs });
  return temporal.client.workflow.getHandle<typeof alertWorkflow>(workflowId);
}

/**
 * Starts a notice about the account's channels (`channel.disabled`) to every enabled channel
 * and the built-ins, recovering like an alert. `noticeId` makes the workflow id: starting it
 * again starts nothing.
 */
export async function startNotice(
  temporal: Temporal,
  input: { accountId: string; payload: AlertPayloadJson; noticeId: string },
): Promise<void> {
  const { accountId, payload, noticeId } = input;
  const recoveryMs = temporal.alertRecoveryMs;
  await startOnce(temporal, `notice-${noticeId}`, {
    kind: 'ready',
    accountId,
    payload,
    recoveryMs,
  });
}

/** Starts a threat event's alert (`alert-<threatEventId>`), once (see `startOnce`). */
export function startThreatAlert(
  temporal: Temporal,
  input: Omit<ThreatAlertInput, 'kind' | 'recoveryMs'>,
): Promise<void> {
  const recoveryMs = temporal.alertRecoveryMs;
  return startOnce(temporal, `alert-${input.threatEventId}`, {
    kind: 'threat',
    ...input,
    recoveryMs,
  });
}

/**
 * Starts a storm's follow-up (`followUpIdOf`), which gathers the hits that joined the event after
 * its first alert: once per event (see `startOnce`).
 */
export function startStormFollowUp(
  temporal: Temporal,
  input: Omit<StormFollowUpInput, 'kind' | 'recoveryMs'>,
): Promise<void> {
  const recoveryMs = temporal.alertRecoveryMs;
  return startOnce(temporal, followUpIdOf(input.threatEventId), {
    kind: 'follow-up',
    ...input,
    recoveryMs,
  });
}

/** A channel test: the same workflow, attempts and timeouts as a real alert; waits for the outcome. */
export async function runChannelTest(
  temporal: Temporal,
  input: Omit<ChannelTestInput, 'kind'>,
): Promise<AlertResult> {
  const workflowId = `channel-test-${input.channelId}-${randomUUID()}`;
  return temporal.client.workflow.execute<typeof alertWorkflow>('alertWorkflow', {
    ...alertStartOptions(temporal, workflowId, { kind: 'test', ...input }),
    workflowExecutionTimeout: '2m',
  });
}

/**
 * Sends a recorded delivery again: a new workflow with the same payload, to that one channel,
 * re-signed at send time and carrying the first delivery id so receivers can de-duplicate.
 */
export async function startResend(
  temporal: Temporal,
  input: Omit<ResendInput, 'kind'>,
): Promise<{ workflowId: string; deliveryId: string }> {
  const workflowId = `resend-${randomUUID()}`;
  await temporal.client.workflow.start<typeof alertWorkflow>(
    'alertWorkflow',
    alertStartOptions(temporal, workflowId, { kind: 'resend', ...input }),
  );
  return { workflowId, deliveryId: `${workflowId}:${input.channelId}` };
}
