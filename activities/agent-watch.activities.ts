import type { AgentsRepository } from '../src/agent/agents.repository';
import { agentAlertPayload } from '../src/alerts/alert-payloads';
import type { ThreatsRepository } from '../src/canaries/threats.repository';
import type { EvidenceStore } from '../src/evidence/evidence.store';
import type { AgentAlertReason, AlertPayloadJson } from '../workflows/shared';
import { sealThreatAlert } from './threat-alert.activities';

export function agentWatchActivities({
  agents,
  threats,
  evidence,
}: {
  agents: AgentsRepository;
  threats: ThreatsRepository;
  evidence: EvidenceStore;
}) {
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
      const now = new Date();
      const payload = agentAlertPayload(now, { ...input, agent });
      await threats.recordEvent({
        id: input.threatEventId,
        accountId: input.accountId,
        canaryId: input.agentId,
        canaryKind: 'agent',
        platform: payload.data.platform,
        source: { ip: '', userAgent: '', via: 'agent', mailServer: null },
        firstHitAt: now,
        lastHitAt: now,
        hitCount: 1,
        alert: null,
      });
      const details = { agent_id: input.agentId, reason: input.reason };
      await sealThreatAlert({ evidence, threats }, input.accountId, payload, details, 1);
      return payload;
    },
  };
}
