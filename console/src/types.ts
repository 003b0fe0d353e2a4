/** The API's answers as the console reads them (see /openapi.json for the full shapes). */

export interface Session {
  token: string;
  user_id: string;
  expires_at: string;
}

export interface Account {
  user_id: string;
  email: string;
  plan: 'free' | 'pro' | 'enterprise';
  created_at: string;
}

export interface Usage {
  plan: string;
  plan_display_name: string;
  metrics: { metric: string; used: number; limit: number; resets_at: string }[];
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
}

export interface Channel {
  id: string;
  kind: 'webhook' | 'slack' | 'discord' | 'teams' | 'pagerduty';
  name: string;
  url: string;
  hasSecret: boolean;
  disabled: boolean;
  events: AlertEvent[] | null;
  minLevel: AlertLevel | null;
  standardWebhooks: boolean;
  lastError: { message: string; status: number | null; at: string } | null;
  lastDeliveryAt: string | null;
  createdAt: string;
}

export const ALERT_EVENTS = ['canary.tripwire_triggered', 'canary.test_alert'] as const;
export type AlertEvent = (typeof ALERT_EVENTS)[number];
export type AlertLevel = 'MEDIUM' | 'HIGH' | 'CRITICAL';

export interface Delivery {
  deliveryId: string;
  event: string;
  resendOf: string | null;
  outcome: string | null;
  status: number | null;
  error: string | null;
  attempts: {
    attempt: number;
    at: string;
    durationMs: number;
    status: number | null;
    error: string | null;
    answer: { contentType: string | null; body: string } | null;
  }[];
  createdAt: string;
  finishedAt: string | null;
}

export interface Resent {
  deliveryId: string;
  workflowId: string;
  resendOf: string;
}

export interface ChannelTest {
  outcome: string;
  status: number | null;
  error: string | null;
}

export type CanaryKind =
  'api_key' | 'aws_access_key' | 'database_url' | 'url' | 'email' | 'dns' | 'kubeconfig';

export interface Canary {
  canary_id: string;
  kind: CanaryKind | 'rag_marker';
  memo: string | null;
  platform: string | null;
  value: string;
  secret?: string;
  files?: { path: string; content: string }[];
  how_to_use: string;
  created_at: string;
  retired_at: string | null;
  hit_count: number;
  last_hit_at: string | null;
}

interface Place {
  ip: string;
  country: string;
  city: string;
  org: string;
}

export interface ThreatEvent {
  threat_event_id: string;
  canary_id: string;
  canary_kind: string;
  platform: string | null;
  source: { ip: string; user_agent: string | null; via: string };
  first_hit_at: string;
  last_hit_at: string;
  hit_count: number;
  alert: {
    alert_level: string;
    risk_score: number;
    risk_level: string;
    interpretation: string;
    memo: string;
    attacker: Place & { type: string; abuseScore: number | null };
    mail_server: Place | null;
    resolver: Place | null;
    sent_at: string;
  } | null;
}

export interface EvidenceRecord {
  log_id: string;
  seq: number;
  kind: string;
  sealed_at: string;
  content_hash: string | null;
  data: Record<string, unknown>;
}

export interface Verification {
  log_id: string;
  verified: boolean;
  tampered: boolean;
  stored_hash: string | null;
  recomputed_hash: string;
  link: { holds: boolean };
}

export interface ChainReport {
  intact: boolean;
  records_checked: number;
  head: { seq: number; hash: string } | null;
  first_edited: { log_id: string; seq: number } | null;
  first_broken_link: { log_id: string; seq: number } | null;
  missing_seqs: { from: number; to: number }[];
}
