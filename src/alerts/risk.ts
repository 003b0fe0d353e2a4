import type { AlertLevel } from './payload';
import { KINDS, type CanaryKind, type KindModule } from '../canaries/kinds';

/**
 * Risk of one threat event, 0-100, as docs/canaries.md documents it:
 *   base by canary kind (`risk.base` of its module in ./kinds; a working-looking credential used is worse than a fetched URL)
 * + attacker type (Tor +20, datacenter +10, internal −20)
 * + abuse score / 5 (0-20; nothing when unknown)
 * + repeated hits: +5 per doubling, at most +15
 * + age: a canary found within a week of planting +5 (its hiding place leaked fast)
 * clamped to 0-100. Levels: ≥ 80 critical (alert CRITICAL), ≥ 50 high (HIGH), else medium/low
 * (MEDIUM; low below 25).
 */
const TYPE_WEIGHT: Record<string, number> = { tor: 20, datacenter: 10, internal: -20 };

export interface RiskInput {
  kind: CanaryKind;
  attackerType: string;
  abuseScore: number | null;
  hits: number;
  ageDays: number;
}

export interface Risk {
  riskScore: number;
  riskLevel: 'critical' | 'high' | 'medium' | 'low';
  alertLevel: AlertLevel;
}

export function assessRisk({ kind, attackerType, abuseScore, hits, ageDays }: RiskInput): Risk {
  const repeated = Math.min(15, 5 * Math.floor(Math.log2(Math.max(1, hits))));
  const raw =
    KINDS[kind].risk.base +
    (TYPE_WEIGHT[attackerType] ?? 0) +
    Math.round((abuseScore ?? 0) / 5) +
    repeated +
    (ageDays < 7 ? 5 : 0);
  const riskScore = Math.max(0, Math.min(100, raw));
  if (riskScore >= 80) return { riskScore, riskLevel: 'critical', alertLevel: 'CRITICAL' };
  if (riskScore >= 50) return { riskScore, riskLevel: 'high', alertLevel: 'HIGH' };
  return { riskScore, riskLevel: riskScore >= 25 ? 'medium' : 'low', alertLevel: 'MEDIUM' };
}

/**
 * One paragraph a person can act on: what fired (with the owner's memo, so they know which one),
 * where it was planted, from where, how often, and what to do.
 */
export function interpret(input: {
  kind: CanaryKind;
  /** What the owner wrote when planting ("prod .env on build box"); '' when nothing. */
  memo: string;
  /** Where the owner planted it, when they said. */
  plantedOn: string | null;
  attackerType: string;
  sourceIp: string;
  hits: number;
}): string {
  const { risk, relay }: KindModule = KINDS[input.kind];
  const from =
    relay === 'mail'
      ? 'received mail'
      : relay === 'dns'
        ? 'was looked up'
        : `was used from ${input.sourceIp || 'an unknown address'}${input.attackerType === 'unknown' ? '' : ` (${input.attackerType})`}`;
  const count = input.hits > 1 ? ` ${input.hits} times` : '';
  const memo = input.memo ? ` "${input.memo}"` : '';
  const planted = input.plantedOn ? ` planted on ${input.plantedOn}` : '';
  const via = relay === 'dns' ? ' (through a DNS resolver, which is not the attacker)' : '';
  return `${risk.what}${memo}${planted} ${from}${via}${count}. ${risk.action}.`;
}
