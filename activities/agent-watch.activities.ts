import type { Db } from 'mongodb';
import { AgentsRepository } from '../src/agent/agents.repository';
import { tripwireAlertPayload } from '../src/alerts/payload';
import { ThreatsRepository } from '../src/canaries/threats.repository';
import type { EvidenceStore } from '../src/evidence/evidence.store';
import type { AgentAlertReason, AlertPayloadJson } from '../workflows/shared';
import { sealThreatAlert } from './threat-alert.activities';

const DAY_MS = 86_400_000;

/** Agent alerts concern the account's own agent: no attacker, so every attacker field is empty. */
const NO_ATTACKER = { ip: '', country: '', city: '', org: '', type: 'unknown', abuseScore: null };

function describeReason(name: string, intervalSeconds: number, reason: AgentAlertReason) {
  if (reason.kind === 'silent') {
    return {
      summary: 'agent went silent',
      risk: { alertLevel: 'MEDIUM', riskScore: 45, riskLevel: 'medium' } as const,
      interpretation: `Agent ${name} sent no heartbeat for ${Math.round(reason.silentForMs / 1000)} s (expected every ${intervalSeconds} s). Check that it is running and has not been stopped or hijacked.`,
    };
  }
  return {
    summary: 'agent skill blocked',
    risk: { alertLevel: 'HIGH', riskScore: 65, riskLevel: 'high' } as const,
    interpretation: `Agent ${name} blocked the skill "${reason.skill}"${reason.reason ? ` (${reason.reason})` : ''}. Review what asked it to use that skill.`,
  };
}

export function agentWatchActivities({ db, evidence }: { db: Db; evidence: EvidenceStore }) {
  const agents = new AgentsRepository(db);
  const threats = new ThreatsRepository(db);

  return {
    /** Records and seals an agent alert as a threat event and returns its payload (idempotent). */
    async raiseAgentAlert(input: {
      accountId: string;
      agentId: string;
      threatEventId: string;
      reason: AgentAlertReason;
    }): Promise<AlertPayloadJson> {
      const known = await threats.findEvent(input.threatEventId);
      if (known?.alert) return known.alert;
      const agent = await agents.find(input.accountId, input.agentId);
      const name = agent?.name ?? input.agentId;
      const now = new Date();
      const { summary, risk, interpretation } = describeReason(
        name,
        agent?.heartbeatIntervalSeconds ?? 0,
        input.reason,
      );
      const platform = agent?.platform ?? 'agent';
      const payload = tripwireAlertPayload(now, {
        ...risk,
        platform,
        canaryKind: 'agent',
        summary,
        canaryId: input.agentId,
        canaryAgeDays: agent ? Math.floor((now.getTime() - agent.createdAt.getTime()) / DAY_MS) : 0,
        attacker: NO_ATTACKER,
        interpretation,
        threatEventId: input.threatEventId,
        triggeredAt: now.toISOString(),
      });
      await threats.recordEvent({
        id: input.threatEventId,
        accountId: input.accountId,
        canaryId: input.agentId,
        canaryKind: 'agent',
        platform,
        source: { ip: '', userAgent: '', via: 'agent', mailServer: null },
        firstHitAt: now,
        lastHitAt: now,
        hitCount: 1,
        alert: null,
      });
      await sealThreatAlert({ evidence, threats }, input.accountId, payload, {
        agent_id: input.agentId,
        reason: input.reason,
      });
      return payload;
    },
  };
}
