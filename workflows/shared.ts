/**
 * The contract between the API, the worker, activities and workflows: inputs, outputs and the
 * search attributes the Temporal UI filters on. Imported by workflow code, so it stays pure.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const DEFAULT_TASK_QUEUE = 'tripwire';

/** Registered on the dev server at start and by the compose set-up job; Keyword type. */
export const searchAttributes = {
  accountId: defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD),
  alertEvent: defineSearchAttributeKey('AlertEvent', SearchAttributeType.KEYWORD),
  threatEventId: defineSearchAttributeKey('ThreatEventId', SearchAttributeType.KEYWORD),
  canaryId: defineSearchAttributeKey('CanaryId', SearchAttributeType.KEYWORD),
  /**
   * Set when an alert ends that did not reach every channel: what its deliveries came to
   * (`ALERT_OUTCOMES` but `UNMARKED_OUTCOME`).
   */
  deliveryOutcome: defineSearchAttributeKey('DeliveryOutcome', SearchAttributeType.KEYWORD),
} as const;

export const SEARCH_ATTRIBUTE_NAMES = Object.values(searchAttributes).map((key) => key.name);

export interface WorkerPingInput {
  accountId: string;
  requestId: string;
}

export interface WorkerPingResult {
  pingId: string;
  recordedAt: string;
  attempt: number;
}

// Failure types: strings, so renaming a class can never change retry behaviour.

/** The threat event an alert reports is gone (its evidence was force-deleted): nothing to send. */
export const THREAT_EVENT_REMOVED = 'ThreatEventRemoved';
/** An activity's input can never be handled (a payload that fails the v1 schema, say). */
export const INVALID_INPUT = 'InvalidInput';
/** An alert's workflow fails with this when, recovery over, none of its channels got it. */
export const ALERT_NOT_DELIVERED = 'AlertNotDelivered';
/** Failures no retry can mend: an activity failing with one fails at once. */
export const PERMANENT_FAILURES = [THREAT_EVENT_REMOVED, INVALID_INPUT];

/** The v1 payload as JSON; the activities validate it with the zod schema before sending. */
export type AlertPayloadJson = {
  event: string;
  sentAt: string;
  data: { threatEventId: string | null } & Record<string, unknown>;
} & Record<string, unknown>;

/** What every delivery workflow carries: its account, and the request that raised it (for logs). */
interface AlertBase {
  accountId: string;
  requestId?: string;
}

/**
 * What an alert (a threat alert, or a ready one such as an agent's) has beyond a channel test or
 * a resend, which answer a person: after a failed delivery, the pauses before each re-delivery
 * (`ALERT_RECOVERY_SCHEDULE`), and an alert that reaches none of its channels fails its workflow.
 */
interface Recovering {
  recoveryMs: number[];
}

/**
 * A canary's threat event, alerted at its first hit: the payload is prepared from the event when
 * the alert starts, and the alert ends with its first round (and any recovery). A storm's later
 * hits go out in one follow-up of its own (`StormFollowUpInput`), which the API starts once it
 * records one.
 */
export interface ThreatAlertInput extends AlertBase, Recovering {
  kind: 'threat';
  threatEventId: string;
  /** Read beside the event when known; the start reconciler leaves it to the event. */
  canaryId?: string;
  /**
   * The event as the API that wrote it started the alert, so the first step need not read it
   * back; the start reconciler (and an API that found the event written) leaves it to the event.
   */
  event?: StartedEvent;
}

/**
 * A storm's follow-up (`followUpIdOf`): the hits that joined a threat event after its first
 * alert, in one alert once the storm is quiet (no hit recorded for `gather.quietMs`, at most
 * `gather.maxMs` of such periods) and the first alert's round is over.
 */
export interface StormFollowUpInput extends AlertBase, Recovering {
  kind: 'follow-up';
  threatEventId: string;
  gather: { quietMs: number; maxMs: number };
  /** For the start's search attributes, when known (the start reconciler leaves it out). */
  canaryId?: string;
}

/**
 * What a threat alert's first payload needs of its event, as the API wrote it (`canaryKind` a
 * canary's kind, never `agent`; `source` its first hit's `HitSource`).
 */
export interface StartedEvent {
  canaryKind: string;
  platform: string;
  source: HitOrigin;
  /** ISO 8601. */
  firstHitAt: string;
  /** The hits of the batch that opened the event: what the first alert reports. */
  hits: number;
  /** Its canary as planted (a canary never changes once planted, only retires). */
  canary: PlantedCanary;
}

/** What a threat alert's payload tells of its canary. */
export interface PlantedCanary {
  /** ISO 8601. */
  createdAt: string;
  memo: string;
  /** Where the owner says it was planted. */
  platform: string | null;
}

/** Where a hit came from (`HitSource` in src/canaries/threats.repository.ts names its `via`). */
export interface HitOrigin {
  /** The client address; empty for a decoy email (the connecting server is not the attacker). */
  ip: string;
  userAgent: string;
  /** How the canary was presented. */
  via: string;
  /** Decoy email only: the server that delivered the mail, and what it said about itself. */
  mailServer: { ip: string; helo: string; mailFrom: string } | null;
  /** DNS canary only: the resolver that asked on the attacker's behalf, and what it asked. */
  resolver?: { ip: string; name: string; type: string };
}

/** A ready payload (an agent alert, say) to every channel that subscribes to it. */
export interface ReadyAlertInput extends AlertBase, Recovering {
  kind: 'ready';
  payload: AlertPayloadJson;
}

/** A channel test: a ready payload to that one channel, whatever it subscribes to. */
export interface ChannelTestInput extends AlertBase {
  kind: 'test';
  payload: AlertPayloadJson;
  channelId: string;
}

/**
 * An account's own notice (a weekly digest) to the channels it chose, whatever they subscribe to.
 * Nobody is waiting on it and the next one comes anyway, so it does not recover.
 */
export interface DigestInput extends AlertBase {
  kind: 'digest';
  payload: AlertPayloadJson;
  channelIds: string[];
}

/** A recorded delivery sent again to its channel, under the delivery id receivers saw first. */
export interface ResendInput extends AlertBase {
  kind: 'resend';
  payload: AlertPayloadJson;
  channelId: string;
  resendOf: string;
}

export type AlertInput =
  | ThreatAlertInput
  | StormFollowUpInput
  | ReadyAlertInput
  | ChannelTestInput
  | DigestInput
  | ResendInput;

/** What an alert is: it recovers and fails visibly. */
export type RecoveringInput = ThreatAlertInput | StormFollowUpInput | ReadyAlertInput;

/** Alerts recover and fail visibly; channel tests and resends answer the person who asked. */
export const isAlert = (input: AlertInput): input is RecoveringInput =>
  input.kind === 'threat' || input.kind === 'follow-up' || input.kind === 'ready';

/** One watched agent: silence past its interval, or a skill it blocked, raises an alert. */
export interface AgentWatchInput {
  accountId: string;
  agentId: string;
  intervalMs: number;
  /** Its alerts' recovery schedule (`ALERT_RECOVERY_SCHEDULE`). */
  recoveryMs: number[];
  /** Carried across continue-as-new: a silence already alerted is not alerted again. */
  silenceAlerted?: boolean;
}

export interface BlockedSkill {
  skill: string;
  reason: string;
}

export type AgentAlertReason =
  { kind: 'silent'; silentForMs: number } | ({ kind: 'blocked_skill' } & BlockedSkill);

export const AGENT_SIGNALS = {
  heartbeat: 'heartbeat',
  blockedSkill: 'blockedSkill',
  retire: 'retire',
} as const;

export interface DeliveryTarget {
  channelId: string;
  kind: string;
  /** The channel's name, for the Temporal UI's activity summaries. */
  name: string;
  /** Why nothing is sent (disabled channel, unconfigured built-in); absent when it is sent. */
  skip?: string;
}

export const DELIVERY_OUTCOMES = ['delivered', 'failed', 'skipped'] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

/** What one attempt came to: delivered, worth another attempt, or refused for good. */
export type Verdict = 'delivered' | 'retry' | 'give-up';

/** One attempt as the sending activity reports it; the workflow records it in a separate step. */
export interface AttemptReport {
  attempt: number;
  /** When the attempt started (ISO 8601). */
  at: string;
  durationMs: number;
  verdict: Verdict;
  status: number | null;
  error: string | null;
  /** The start of the receiver's answer (HTTP kinds): first 1 KB of the body, its content type. */
  answer: { contentType: string | null; body: string } | null;
}

/** An alert's outcome over all its deliveries, as the `DeliveryOutcome` search attribute shows it. */
export const ALERT_OUTCOMES = ['delivered', 'partly_failed', 'failed', 'nothing_sent'] as const;
export type AlertOutcome = (typeof ALERT_OUTCOMES)[number];

/**
 * The outcome an alert leaves unmarked: every other one is set as `DeliveryOutcome`, and a
 * completed alert without it reached every channel.
 */
export const UNMARKED_OUTCOME: AlertOutcome = 'delivered';

export function alertOutcome(results: Pick<ChannelResult, 'outcome'>[]): AlertOutcome {
  const delivered = results.some((r) => r.outcome === 'delivered');
  const failed = results.some((r) => r.outcome === 'failed');
  if (failed) return delivered ? 'partly_failed' : 'failed';
  return delivered ? 'delivered' : 'nothing_sent';
}

export interface ChannelResult {
  channelId: string;
  kind: string;
  deliveryId: string;
  outcome: DeliveryOutcome;
  /** Null when the last attempt got no answer (a network error or a timeout). */
  status?: number | null;
  error?: string;
}

/** A delivery's id: the same for every attempt and every recovery round of it. */
export const deliveryIdOf = (workflowId: string, channelId: string) => `${workflowId}:${channelId}`;

/** A storm follow-up's workflow id (one per threat event). */
export const followUpIdOf = (threatEventId: string) => `follow-up-${threatEventId}`;

/** A delivery's result from its last attempt's report. */
export function channelResult(
  { channelId, kind, deliveryId }: Pick<ChannelResult, 'channelId' | 'kind' | 'deliveryId'>,
  last: AttemptReport,
): ChannelResult {
  const base = { channelId, kind, deliveryId };
  return last.verdict === 'delivered'
    ? { ...base, outcome: 'delivered', status: last.status }
    : { ...base, outcome: 'failed', status: last.status, error: last.error ?? 'delivery failed' };
}

/**
 * An alert's first attempts, one to every target at once in one local activity, with the
 * targets read for them. When every attempt is final (delivered, or refused for good) the
 * outcomes are recorded in the same step (`recorded: 'outcomes'`); otherwise the attempts to be
 * retried are (`'attempts'`), and the final ones wait for the outcome record. `'none'`: the
 * database failed the record, which the workflow then makes in a step retried until it lands (a
 * receiver's answer is never lost, nor the alert sent again, for a database down at that moment).
 */
export interface FirstAttempts {
  targets: DeliveryTarget[];
  /** By channel id: each sent target's first attempt. */
  reports: Record<string, AttemptReport>;
  recorded: 'outcomes' | 'attempts' | 'none';
}

/** A threat alert's first step: its payload prepared, sealed (`sealed`: false if that failed) and sent. */
export interface ThreatFirstAttempts extends FirstAttempts, PreparedThreat {
  sealed: boolean;
}

/** A threat alert's first payload, and how many hits it reports (the storm's count then). */
export interface PreparedThreat {
  payload: AlertPayloadJson;
  hits: number;
}

/**
 * A storm's event as its follow-up reads it: its hits so far, and how many the first alert
 * reported, once that alert's first round is over (null until then).
 */
export interface StormCount {
  hits: number;
  reported: number | null;
}

export interface AlertResult {
  results: ChannelResult[];
}

/** An account's weekly digest: from its Schedule (`scheduled`), or sent now on request. */
export interface WeeklyDigestInput {
  accountId: string;
  /** A scheduled run sends nothing when the digest was turned off in the meantime. */
  scheduled?: boolean;
}
