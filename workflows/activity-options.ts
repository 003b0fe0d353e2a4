import type { ActivityOptions, LocalActivityOptions, RetryPolicy } from '@temporalio/workflow';
import { PERMANENT_FAILURES } from './shared';

/**
 * Reads and writes that must land (an outcome unrecorded is an alert lost): retried through a
 * database outage, backing off to one try a minute; a failure no retry can mend fails at once.
 */
const UNTIL_IT_LANDS: RetryPolicy = {
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '1m',
  maximumAttempts: Number.POSITIVE_INFINITY,
  nonRetryableErrorTypes: PERMANENT_FAILURES,
};

/**
 * One attempt of an alert to one channel (the spec's 10 s per attempt), never retried by
 * Temporal: the workflow decides on the next attempt, so each is its own step in the history. A
 * local activity: the worker sends it within the workflow task that asks for it, so a delivered
 * alert takes one workflow task and no activity task (the Temporal server's work per task is
 * what limits alerts per second). A worker lost mid-attempt sends it again under the same
 * delivery id, as a timed-out activity's next attempt would.
 */
export const ONE_SEND_ATTEMPT: LocalActivityOptions = {
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 1 },
};

/**
 * An alert's first step: its targets read, the first attempt to each (each bounded by the
 * provider's own 9.5 s), and their record. Never retried by Temporal: after a failure the
 * workflow makes the round in separate steps (`ONE_SEND_ATTEMPT`, `ALERT_BOOKKEEPING`). A worker
 * lost mid-step sends the first attempts again under the same delivery ids.
 */
export const FIRST_ATTEMPTS: LocalActivityOptions = {
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 1 },
};

/** An alert's reads and records, run by the worker within the workflow task that needs them. */
export const ALERT_BOOKKEEPING: LocalActivityOptions = {
  startToCloseTimeout: '10s',
  retry: UNTIL_IT_LANDS,
};

/** An agent alert's record and seal, before its alert workflow starts. */
export const AGENT_ALERT_RECORD: ActivityOptions = {
  startToCloseTimeout: '10s',
  retry: UNTIL_IT_LANDS,
};

/** A worker ping's write: a few quick tries, so a stuck ping reports a failure soon. */
export const PING_WRITE: ActivityOptions = {
  startToCloseTimeout: '5s',
  retry: {
    initialInterval: '500ms',
    backoffCoefficient: 2,
    maximumInterval: '2s',
    maximumAttempts: 3,
    nonRetryableErrorTypes: PERMANENT_FAILURES,
  },
};

/** The floor workflow's no-op step (benchmarks): never retried, so a failure shows at once. */
export const FLOOR_STEP: LocalActivityOptions & ActivityOptions = {
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 1 },
};

/**
 * A weekly digest's figures: a few aggregations over the account's week. Retried through a
 * database outage, but not forever: a digest still stuck after about ten minutes is skipped, so
 * it cannot hold the account's Schedule (which skips a run while the last one runs).
 */
export const WEEKLY_DIGEST_COMPOSE: ActivityOptions = {
  startToCloseTimeout: '1m',
  retry: { ...UNTIL_IT_LANDS, maximumAttempts: 12 },
};
