import type { AlertLevel } from './payload';
import type { CanaryKind } from '../canaries/decoys';

/**
 * Risk of one threat event, 0-100, as docs/canaries.md documents it:
 *   base by canary kind (a working-looking credential used is worse than a fetched URL)
 * + attacker type (Tor +20, datacenter +10, internal −20)
 * + abuse score / 5 (0-20; nothing when unknown)
 * + repeated hits: +5 per doubling, at most +15
 * + age: a canary found within a week of planting +5 (its hiding place leaked fast)
 * clamped to 0-100. Levels: ≥ 80 critical (alert CRITICAL), ≥ 50 high (HIGH), else medium/low
 * (MEDIUM; low below 25).
 */
const BASE: Record<CanaryKind, number> = {
  api_key: 60,
  aws_access_key: 60,
  database_url: 55,
  url: 40,
  email: 35,
  rag_marker: 50,
  dns: 40,
  kubeconfig: 65,
};

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
    BASE[kind] +
    (TYPE_WEIGHT[attackerType] ?? 0) +
    Math.round((abuseScore ?? 0) / 5) +
    repeated +
    (ageDays < 7 ? 5 : 0);
  const riskScore = Math.max(0, Math.min(100, raw));
  if (riskScore >= 80) return { riskScore, riskLevel: 'critical', alertLevel: 'CRITICAL' };
  if (riskScore >= 50) return { riskScore, riskLevel: 'high', alertLevel: 'HIGH' };
  return { riskScore, riskLevel: riskScore >= 25 ? 'medium' : 'low', alertLevel: 'MEDIUM' };
}

const WHAT: Record<CanaryKind, string> = {
  api_key: 'A decoy API key',
  aws_access_key: 'A decoy cloud access key',
  database_url: 'A decoy database password',
  url: 'A tripwire URL',
  email: 'A decoy email address',
  rag_marker: 'A document marker',
  dns: 'A DNS canary hostname',
  kubeconfig: 'A decoy kubeconfig',
};

const ACTION: Record<CanaryKind, string> = {
  api_key: 'Find where this key was stored and treat that place as exposed',
  aws_access_key: 'Find where this key was stored and treat that place as exposed',
  database_url: 'Treat the file or secret store that held this connection string as exposed',
  url: 'Find where this link was kept; someone who should not have it is following it',
  email:
    'The address was harvested from where you planted it; expect phishing or spam to your real addresses',
  rag_marker:
    'The document reached a place it should not; find the system or person that exposed it',
  dns: 'Someone is using the file or system where this hostname was planted; treat it as exposed',
  kubeconfig:
    'Treat the machine or store that held this kubeconfig as exposed, and check who can reach your real clusters',
};

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
  const from =
    input.kind === 'email'
      ? 'received mail'
      : input.kind === 'dns'
        ? 'was looked up'
        : `was used from ${input.sourceIp || 'an unknown address'}${input.attackerType === 'unknown' ? '' : ` (${input.attackerType})`}`;
  const count = input.hits > 1 ? ` ${input.hits} times` : '';
  const memo = input.memo ? ` "${input.memo}"` : '';
  const planted = input.plantedOn ? ` planted on ${input.plantedOn}` : '';
  const via = input.kind === 'dns' ? ' (through a DNS resolver, which is not the attacker)' : '';
  return `${WHAT[input.kind]}${memo}${planted} ${from}${via}${count}. ${ACTION[input.kind]}.`;
}
