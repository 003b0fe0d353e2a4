import type { Temporal } from '../temporal/client';
import type { agentWatchWorkflow } from '../../workflows';
import {
  AGENT_SIGNALS,
  searchAttributes,
  type AgentWatchInput,
  type BlockedSkill,
} from '../../workflows/shared';

const watchId = (agentId: string) => `agent-watch-${agentId}`;

export async function startAgentWatch(
  temporal: Temporal,
  input: Omit<AgentWatchInput, 'recoveryMs'>,
): Promise<void> {
  await temporal.client.workflow.start<typeof agentWatchWorkflow>('agentWatchWorkflow', {
    taskQueue: temporal.taskQueue,
    workflowId: watchId(input.agentId),
    args: [{ ...input, recoveryMs: temporal.alertRecoveryMs }],
    memo: { accountId: input.accountId, agentId: input.agentId },
    typedSearchAttributes: [{ key: searchAttributes.accountId, value: input.accountId }],
  });
}

export async function signalHeartbeat(temporal: Temporal, agentId: string): Promise<void> {
  await temporal.client.workflow.getHandle(watchId(agentId)).signal(AGENT_SIGNALS.heartbeat);
}

export async function signalBlockedSkill(
  temporal: Temporal,
  agentId: string,
  skill: BlockedSkill,
): Promise<void> {
  await temporal.client.workflow
    .getHandle(watchId(agentId))
    .signal<[BlockedSkill]>(AGENT_SIGNALS.blockedSkill, skill);
}

export async function retireAgentWatch(temporal: Temporal, agentId: string): Promise<void> {
  await temporal.client.workflow.getHandle(watchId(agentId)).signal(AGENT_SIGNALS.retire);
}
