import { WorkflowNotFoundError } from '@temporalio/client';
import type { Response } from 'express';
import { z } from 'zod';
import type { Clock } from '../clock';
import { callerAccountId, findOwned } from '../auth/caller';
import { DomainError } from '../errors';
import { operationsFor } from '../http/operation';
import { START_DEADLINE_MS, type Temporal } from '../temporal/client';
import {
  retireAgentWatch,
  signalBlockedSkill,
  signalHeartbeat,
  startAgentWatch,
} from './agent-workflows';
import type { Agent, AgentsRepository } from './agents.repository';

export const registerSchema = z
  .object({
    name: z.string().trim().min(1).max(100),
    heartbeat_interval_seconds: z.number().int().min(1).max(86_400),
    platform: z.string().trim().min(1).max(100).optional(),
  })
  .strict();

export const blockedSkillSchema = z
  .object({
    skill: z.string().trim().min(1).max(200),
    reason: z.string().trim().max(500).default(''),
  })
  .strict();

export const agentView = z
  .object({
    agent_id: z.string(),
    name: z.string(),
    platform: z.string().nullable(),
    heartbeat_interval_seconds: z.number().int(),
    last_heartbeat_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    watch_workflow_id: z.string(),
  })
  .meta({ id: 'Agent' });
export const agentListView = z.object({ agents: z.array(agentView) }).meta({ id: 'AgentList' });
export const heartbeatView = z
  .object({ agent_id: z.string(), received: z.literal(true) })
  .meta({ id: 'HeartbeatReceived' });
export const blockedSkillView = z
  .object({ agent_id: z.string(), reported: z.literal(true) })
  .meta({ id: 'BlockedSkillReported' });

function describe(agent: Agent): z.output<typeof agentView> {
  return {
    agent_id: agent.id,
    name: agent.name,
    platform: agent.platform,
    heartbeat_interval_seconds: agent.heartbeatIntervalSeconds,
    last_heartbeat_at: agent.lastHeartbeatAt?.toISOString() ?? null,
    created_at: agent.createdAt.toISOString(),
    watch_workflow_id: `agent-watch-${agent.id}`,
  };
}

export interface AgentDeps {
  agents: AgentsRepository;
  temporal: Temporal;
  clock: Clock;
}

const owned = (agents: AgentsRepository, res: Response, agentId: string) =>
  findOwned(res, agents, agentId, `agent ${agentId}`);

/** A watch that is gone (retired meanwhile) answers like an unknown agent. */
async function toWatch(agentId: string, send: () => Promise<void>) {
  try {
    await send();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) {
      throw new DomainError('not_found', `No agent ${agentId}`);
    }
    throw err;
  }
}

const operation = operationsFor<AgentDeps>('Agents');

/**
 * `/agent` (session, or API key with agent scopes): register agents, take their heartbeats and
 * blocked-skill reports; a Temporal workflow per agent raises the alerts.
 */
export const agentOperations = [
  operation({
    operationId: 'registerAgent',
    method: 'post',
    path: '/agent/agents',
    summary: 'Register an agent',
    description: "Starts the agent's watch workflow.",
    auth: 'sessionOrApiKey',
    body: registerSchema,
    success: { status: 201, description: 'The agent' },
    response: agentView,
    examples: { body: { name: 'support bot', heartbeat_interval_seconds: 300 } },
    handler: async ({ body, req, res }, { agents, temporal, clock }) => {
      const agent = await agents.create(
        {
          accountId: callerAccountId(res),
          name: body.name,
          platform: body.platform ?? null,
          heartbeatIntervalSeconds: body.heartbeat_interval_seconds,
        },
        clock(),
      );
      try {
        await temporal.client.withDeadline(Date.now() + START_DEADLINE_MS, () =>
          startAgentWatch(temporal, {
            accountId: agent.accountId,
            agentId: agent.id,
            intervalMs: agent.heartbeatIntervalSeconds * 1000,
          }),
        );
        await agents.watchStarted(agent.id);
      } catch (err) {
        // The agent keeps its pending mark: the start reconciler starts the watch once Temporal answers.
        req.log.warn({ err, agentId: agent.id }, 'agent watch not started yet');
      }
      return describe(agent);
    },
  }),
  operation({
    operationId: 'listAgents',
    method: 'get',
    path: '/agent/agents',
    summary: 'Agents',
    auth: 'sessionOrApiKey',
    success: { status: 200, description: '`{agents}`' },
    response: agentListView,
    handler: async ({ res }, { agents }) => ({
      agents: (await agents.list(callerAccountId(res))).map(describe),
    }),
  }),
  operation({
    operationId: 'getAgent',
    method: 'get',
    path: '/agent/agents/{agent_id}',
    summary: 'One agent',
    auth: 'sessionOrApiKey',
    success: { status: 200, description: 'The agent' },
    response: agentView,
    handler: async ({ params, res }, { agents }) =>
      describe(await owned(agents, res, params.agent_id!)),
  }),
  operation({
    operationId: 'recordHeartbeat',
    method: 'post',
    path: '/agent/agents/{agent_id}/heartbeat',
    summary: 'Heartbeat',
    auth: 'sessionOrApiKey',
    success: { status: 202, description: '`{agent_id, received}`' },
    response: heartbeatView,
    handler: async ({ params, res }, { agents, temporal, clock }) => {
      const agent = await owned(agents, res, params.agent_id!);
      await toWatch(agent.id, () => signalHeartbeat(temporal, agent.id));
      await agents.recordHeartbeat(agent.accountId, agent.id, clock());
      return { agent_id: agent.id, received: true as const };
    },
  }),
  operation({
    operationId: 'reportBlockedSkill',
    method: 'post',
    path: '/agent/agents/{agent_id}/blocked-skill',
    summary: 'Report a blocked skill',
    description: 'Raises a HIGH alert.',
    auth: 'sessionOrApiKey',
    body: blockedSkillSchema,
    success: { status: 202, description: '`{agent_id, reported}`' },
    response: blockedSkillView,
    examples: { body: { skill: 'shell.exec', reason: 'not on the allow list' } },
    handler: async ({ body: skill, params, res }, { agents, temporal }) => {
      const agent = await owned(agents, res, params.agent_id!);
      await toWatch(agent.id, () => signalBlockedSkill(temporal, agent.id, skill));
      return { agent_id: agent.id, reported: true as const };
    },
  }),
  /** Stops watching; alerts already raised stay in the threat views and the evidence log. */
  operation({
    operationId: 'deleteAgent',
    method: 'delete',
    path: '/agent/agents/{agent_id}',
    summary: 'Stop watching an agent',
    description: 'Stops the watch; alerts already raised stay.',
    auth: 'sessionOrApiKey',
    success: { status: 204, description: 'Done, no body' },
    handler: async ({ params, res }, { agents, temporal }) => {
      const agent = await owned(agents, res, params.agent_id!);
      await toWatch(agent.id, () => retireAgentWatch(temporal, agent.id)).catch((err: unknown) => {
        if (!(err instanceof DomainError)) throw err; // already stopped: still remove the record
      });
      await agents.remove(agent.accountId, agent.id);
    },
  }),
];
