import { WorkflowNotFoundError } from '@temporalio/client';
import { Router, type Response } from 'express';
import { z } from 'zod';
import type { Clock } from '../clock';
import { callerAccountId, ownedByCaller } from '../http/caller';
import { AppError } from '../http/errors';
import { validateBody } from '../http/validate';
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

export const agentView = z.object({
  agent_id: z.string(),
  name: z.string(),
  platform: z.string().nullable(),
  heartbeat_interval_seconds: z.number().int(),
  last_heartbeat_at: z.iso.datetime().nullable(),
  created_at: z.iso.datetime(),
  watch_workflow_id: z.string(),
});
export const agentListView = z.object({ agents: z.array(agentView) });
export const heartbeatView = z.object({ agent_id: z.string(), received: z.literal(true) });
export const blockedSkillView = z.object({ agent_id: z.string(), reported: z.literal(true) });

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

/**
 * `/agent` (session, or API key with agent scopes): register agents, take their heartbeats and
 * blocked-skill reports; a Temporal workflow per agent raises the alerts.
 */
export function agentRoutes(deps: {
  agents: AgentsRepository;
  temporal: Temporal;
  clock: Clock;
}): Router {
  const { agents, temporal, clock } = deps;
  const router = Router();

  const owned = async (res: Response, agentId: string) =>
    ownedByCaller(res, await agents.findById(agentId), `agent ${agentId}`);

  /** A watch that is gone (retired meanwhile) answers like an unknown agent. */
  const toWatch = async (agentId: string, send: () => Promise<void>) => {
    try {
      await send();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new AppError(404, `No agent ${agentId}`);
      throw err;
    }
  };

  router.post('/agents', validateBody(registerSchema), async (req, res) => {
    const body = req.body as z.infer<typeof registerSchema>;
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
    res.status(201).json(describe(agent));
  });

  router.get('/agents', async (_req, res) => {
    const list = await agents.list(callerAccountId(res));
    res.json({ agents: list.map(describe) } satisfies z.output<typeof agentListView>);
  });

  router.get('/agents/:agent_id', async (req, res) => {
    res.json(describe(await owned(res, req.params.agent_id)));
  });

  router.post('/agents/:agent_id/heartbeat', async (req, res) => {
    const agent = await owned(res, req.params.agent_id);
    await toWatch(agent.id, () => signalHeartbeat(temporal, agent.id));
    await agents.recordHeartbeat(agent.id, clock());
    res
      .status(202)
      .json({ agent_id: agent.id, received: true } satisfies z.output<typeof heartbeatView>);
  });

  router.post(
    '/agents/:agent_id/blocked-skill',
    validateBody(blockedSkillSchema),
    async (req, res) => {
      const agent = await owned(res, String(req.params.agent_id));
      const skill = req.body as z.infer<typeof blockedSkillSchema>;
      await toWatch(agent.id, () => signalBlockedSkill(temporal, agent.id, skill));
      res.status(202).json({
        agent_id: agent.id,
        reported: true,
      } satisfies z.output<typeof blockedSkillView>);
    },
  );

  /** Stops watching; alerts already raised stay in the threat views and the evidence log. */
  router.delete('/agents/:agent_id', async (req, res) => {
    const agent = await owned(res, req.params.agent_id);
    await toWatch(agent.id, () => retireAgentWatch(temporal, agent.id)).catch((err: unknown) => {
      if (!(err instanceof AppError)) throw err; // already stopped: still remove the record
    });
    await agents.remove(agent.id);
    res.status(204).end();
  });

  return router;
}
