import { executeChild, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { WEEKLY_DIGEST_COMPOSE } from './activity-options';
import { alertWorkflow } from './alert.workflow';
import { searchAttributes, type AlertResult, type WeeklyDigestInput } from './shared';

const { composeWeeklyDigest } = proxyActivities<Activities>(WEEKLY_DIGEST_COMPOSE);

/**
 * One weekly digest: its figures are composed from the account's week, then delivered to the
 * account's chosen channels by a child `alertWorkflow`, so it goes out exactly as an alert does
 * (10 s attempts, three in all, each recorded in the deliveries list and the evidence log).
 */
export async function weeklyDigestWorkflow(input: WeeklyDigestInput): Promise<AlertResult> {
  const digest = await composeWeeklyDigest(input);
  if (!digest) return { results: [] };
  return executeChild(alertWorkflow, {
    // By the run id: a digest sent now reuses its workflow id, and each delivery id must be new.
    workflowId: `weekly-digest-delivery-${input.accountId}-${workflowInfo().runId}`,
    args: [
      {
        kind: 'digest',
        accountId: input.accountId,
        payload: digest.payload,
        channelIds: digest.channelIds,
      },
    ],
    typedSearchAttributes: [
      { key: searchAttributes.accountId, value: input.accountId },
      { key: searchAttributes.alertEvent, value: digest.payload.event },
    ],
    staticSummary: 'Delivery of a weekly digest',
  });
}
