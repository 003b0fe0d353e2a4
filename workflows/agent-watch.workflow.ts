import {
  condition,
  continueAsNew,
  defineSignal,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { AGENT_ALERT_RECORD } from './activity-options';
import { alertWorkflow } from './alert.workflow';
import {
  AGENT_SIGNALS,
  type AgentAlertReason,
  type AgentWatchInput,
  type BlockedSkill,
} from './shared';

export const heartbeatSignal = defineSignal(AGENT_SIGNALS.heartbeat);
export const blockedSkillSignal = defineSignal<[BlockedSkill]>(AGENT_SIGNALS.blockedSkill);
export const retireSignal = defineSignal(AGENT_SIGNALS.retire);

const { raiseAgentAlert } = proxyActivities<Activities>(AGENT_ALERT_RECORD);

/** Bounds the history: after this many wake-ups the watch continues as a new run. */
const WAKE_UPS_PER_RUN = 500;

/**
 * Watches one agent with timers, not polling: it sleeps until the agent's next heartbeat is due
 * and wakes early on a heartbeat, a blocked skill or retirement. Silence past the interval raises
 * one alert (no more until a heartbeat comes); each blocked skill raises one. Alerts run as child
 * `alertWorkflow`s, so delivery is the same as for any canary.
 */
export async function agentWatchWorkflow(input: AgentWatchInput): Promise<void> {
  let beats = 0;
  let retired = false;
  const blocked: BlockedSkill[] = [];
  setHandler(heartbeatSignal, () => void beats++);
  setHandler(blockedSkillSignal, (skill) => void blocked.push(skill));
  setHandler(retireSignal, () => void (retired = true));

  let raised = 0;
  const raise = async (reason: AgentAlertReason) => {
    raised++;
    // The run id and a count: unique, and the same on every replay. Not `uuid4()`: it draws from
    // the workflow's seeded random source, which the tracing interceptors draw from too.
    const threatEventId = `thr_agent_${workflowInfo().runId}_${raised}`;
    const payload = await raiseAgentAlert({
      accountId: input.accountId,
      agentId: input.agentId,
      threatEventId,
      reason,
    });
    await startChild(alertWorkflow, {
      workflowId: `alert-${threatEventId}`,
      args: [{ kind: 'ready', accountId: input.accountId, payload, recoveryMs: input.recoveryMs }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
  };

  let silenceAlerted = input.silenceAlerted ?? false;
  let lastBeat = Date.now();
  for (let wakeUps = 0; wakeUps < WAKE_UPS_PER_RUN; wakeUps++) {
    const seen = beats;
    const woken = () => beats !== seen || blocked.length > 0 || retired;
    const due = lastBeat + input.intervalMs - Date.now();
    if (due > 0) {
      await condition(woken, due);
    } else {
      if (!silenceAlerted) {
        silenceAlerted = true;
        await raise({ kind: 'silent', silentForMs: Date.now() - lastBeat });
      }
      await condition(woken);
    }
    if (retired) return;
    for (let skill = blocked.shift(); skill; skill = blocked.shift()) {
      await raise({ kind: 'blocked_skill', ...skill });
    }
    if (beats !== seen) {
      lastBeat = Date.now();
      silenceAlerted = false;
    }
  }
  await continueAsNew<typeof agentWatchWorkflow>({ ...input, silenceAlerted });
}
