import type { Agent } from '../agent/agents.repository';
import type { Canary } from '../canaries/canaries.repository';
import type { ThreatEvent } from '../canaries/threats.repository';
import type { AgentAlertReason } from '../../workflows/shared';
import type { IpEnrichment } from './enrichment';
import { tripwireAlertPayload, type AlertPayload } from './payload';
import { assessRisk, interpret } from './risk';

const DAY_MS = 86_400_000;

/** A canary's threat event: agent alerts are built by `agentAlertPayload`. */
export type TripwireEvent = ThreatEvent & {
  canaryKind: Exclude<ThreatEvent['canaryKind'], 'agent'>;
};

const NO_PLACE = { ip: '', country: '', city: '', org: '' };
const NO_ATTACKER = { ...NO_PLACE, type: 'unknown', abuseScore: null };

function place({ ip, country, city, org }: IpEnrichment) {
  return { ip, country, city, org };
}

/**
 * The address to enrich for an event: a decoy email's mail server and a DNS canary's resolver
 * relay for the attacker, so they are enriched (and shown as such) instead of the source.
 */
export function enrichedAddress(event: TripwireEvent): string {
  return event.source.mailServer?.ip ?? event.source.resolver?.ip ?? event.source.ip;
}

/** Whole days from planting to the first hit; 0 when the canary is gone. */
export function canaryAgeDays(canary: Pick<Canary, 'createdAt'> | null, at: Date): number {
  return canary ? Math.max(0, Math.floor((at.getTime() - canary.createdAt.getTime()) / DAY_MS)) : 0;
}

/** What a threat alert's payload tells of its canary. */
export type PayloadCanary = Pick<Canary, 'createdAt' | 'memo' | 'platform'>;

/**
 * The v1 payload of a threat event reporting `hits`: its enrichment (`looked`, of
 * `enrichedAddress(event)`), risk and interpretation. A relay's event leaves the attacker's own
 * fields empty.
 */
export function threatAlertPayload(
  now: Date,
  {
    event,
    canary,
    looked,
    hits,
    summary,
  }: {
    event: TripwireEvent;
    canary: PayloadCanary | null;
    looked: IpEnrichment;
    hits: number;
    summary: string;
  },
): AlertPayload {
  const { mailServer, resolver } = event.source;
  const relayed = Boolean(mailServer ?? resolver);
  const ageDays = canaryAgeDays(canary, event.firstHitAt);
  const attacker = relayed
    ? NO_ATTACKER
    : { ...place(looked), type: looked.type, abuseScore: looked.abuseScore };
  const risk = assessRisk({
    kind: event.canaryKind,
    attackerType: attacker.type,
    abuseScore: attacker.abuseScore,
    hits,
    ageDays,
  });
  return tripwireAlertPayload(now, {
    alertLevel: risk.alertLevel,
    platform: event.platform,
    memo: canary?.memo ?? '',
    canaryKind: event.canaryKind,
    summary,
    canaryId: event.canaryId,
    canaryAgeDays: ageDays,
    attacker,
    ...(mailServer && { mailServer: place(looked) }),
    ...(resolver && { resolver: place(looked) }),
    riskScore: risk.riskScore,
    riskLevel: risk.riskLevel,
    interpretation: interpret({
      kind: event.canaryKind,
      memo: canary?.memo ?? '',
      plantedOn: canary?.platform ?? null,
      attackerType: attacker.type,
      sourceIp: event.source.ip,
      hits,
    }),
    threatEventId: event.id,
    triggeredAt: event.firstHitAt.toISOString(),
  });
}

/** A storm's follow-up names the hits that came after the first alert. */
export function followUpSummary(newHits: number): string {
  return `canary fired again: ${newHits} more hit${newHits === 1 ? '' : 's'} since the first alert`;
}

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

/**
 * The v1 payload of a watched agent's alert. It concerns the account's own agent: no attacker,
 * so every attacker field is empty; `agent` is null when the agent is gone.
 */
export function agentAlertPayload(
  now: Date,
  {
    agentId,
    agent,
    threatEventId,
    reason,
  }: {
    agentId: string;
    agent: Pick<Agent, 'name' | 'platform' | 'heartbeatIntervalSeconds' | 'createdAt'> | null;
    threatEventId: string;
    reason: AgentAlertReason;
  },
): AlertPayload {
  const { summary, risk, interpretation } = describeReason(
    agent?.name ?? agentId,
    agent?.heartbeatIntervalSeconds ?? 0,
    reason,
  );
  return tripwireAlertPayload(now, {
    ...risk,
    platform: agent?.platform ?? 'agent',
    canaryKind: 'agent',
    summary,
    canaryId: agentId,
    canaryAgeDays: agent ? Math.floor((now.getTime() - agent.createdAt.getTime()) / DAY_MS) : 0,
    attacker: NO_ATTACKER,
    interpretation,
    threatEventId,
    triggeredAt: now.toISOString(),
  });
}
