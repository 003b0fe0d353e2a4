import { defaultPayloadConverter, WorkflowNotFoundError } from '@temporalio/common';
import { google, temporal as proto } from '@temporalio/proto';
import { DomainError } from '../errors';
import type { Temporal } from '../temporal/client';
import { searchAttributes, UNMARKED_OUTCOME } from '../../workflows/shared';

type RawExecution = proto.api.workflow.v1.IWorkflowExecutionInfo;
type HistoryEvent = proto.api.history.v1.IHistoryEvent;

/** Visibility's execution statuses, as the API names them (lower case, no prefix). */
export const RUN_STATUSES = [
  'running',
  'completed',
  'failed',
  'canceled',
  'terminated',
  'continued_as_new',
  'timed_out',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

const STATUS_QUERY: Record<RunStatus, string> = {
  running: 'Running',
  completed: 'Completed',
  failed: 'Failed',
  canceled: 'Canceled',
  terminated: 'Terminated',
  continued_as_new: 'ContinuedAsNew',
  timed_out: 'TimedOut',
};

/**
 * What a filter value may hold: ids, event names and Temporal's workflow ids. Nothing that could
 * close the quoted string of the visibility query, so a filter never widens it to other tenants.
 */
export const QUERY_SAFE = /^[A-Za-z0-9_.:@-]{1,200}$/;

export interface RunFilters {
  status?: RunStatus;
  event?: string;
  canaryId?: string;
  since?: Date;
  until?: Date;
}

export interface RunSummary {
  workflowId: string;
  runId: string;
  workflowType: string;
  status: RunStatus;
  /** What the alert's deliveries came to, once it ended (an alert's `DeliveryOutcome`). */
  outcome: string | null;
  event: string | null;
  canaryId: string | null;
  startedAt: Date | null;
  closedAt: Date | null;
}

/** One step of a run's history, told as the Temporal UI would show it to its owner. */
export interface RunStep {
  eventId: number;
  at: Date | null;
  /** The history event's type in lower snake case, e.g. `activity_task_failed`. */
  type: string;
  /** The activity it concerns (scheduled, started, completed, failed, timed out). */
  activity?: string;
  attempt?: number;
  /** A failure's message, a timer's duration, a signal's name. */
  detail?: string;
}

const quoted = (value: string) => `'${value}'`;

function statusOf(status: number | null | undefined): RunStatus {
  const name = proto.api.enums.v1.WorkflowExecutionStatus[status ?? 0] ?? '';
  const key = name.replace('WORKFLOW_EXECUTION_STATUS_', '').toLowerCase();
  return (RUN_STATUSES as readonly string[]).includes(key) ? (key as RunStatus) : 'running';
}

function dateOf(ts: google.protobuf.ITimestamp | null | undefined): Date | null {
  if (!ts?.seconds) return null;
  return new Date(Number(ts.seconds) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6));
}

function keyword(raw: RawExecution, name: string): string | null {
  const payload = raw.searchAttributes?.indexedFields?.[name];
  if (!payload) return null;
  const value: unknown = defaultPayloadConverter.fromPayload(payload);
  // A keyword set through the typed API arrives as a one-element list.
  const first = Array.isArray(value) ? (value[0] as unknown) : value;
  return typeof first === 'string' ? first : null;
}

/** An alert's `DeliveryOutcome`, or for a completed alert without one `UNMARKED_OUTCOME`. */
function outcomeOf(raw: RawExecution, workflowType: string, status: RunStatus): string | null {
  const marked = keyword(raw, searchAttributes.deliveryOutcome.name);
  if (marked || workflowType !== 'alertWorkflow' || status !== 'completed') return marked;
  return UNMARKED_OUTCOME;
}

function summaryOf(raw: RawExecution): RunSummary {
  const workflowType = raw.type?.name ?? '';
  const status = statusOf(raw.status);
  return {
    workflowId: raw.execution?.workflowId ?? '',
    runId: raw.execution?.runId ?? '',
    workflowType,
    status,
    outcome: outcomeOf(raw, workflowType, status),
    event: keyword(raw, searchAttributes.alertEvent.name),
    canaryId: keyword(raw, searchAttributes.canaryId.name),
    startedAt: dateOf(raw.startTime),
    closedAt: dateOf(raw.closeTime),
  };
}

/** The visibility query for one account's runs: the account clause is always there, first. */
export function visibilityQuery(accountId: string, filters: RunFilters): string {
  for (const value of [accountId, filters.event, filters.canaryId]) {
    if (value !== undefined && !QUERY_SAFE.test(value)) {
      throw new Error(`a visibility filter value outside ${String(QUERY_SAFE)}`);
    }
  }
  const clauses = [`${searchAttributes.accountId.name} = ${quoted(accountId)}`];
  if (filters.status) clauses.push(`ExecutionStatus = ${quoted(STATUS_QUERY[filters.status])}`);
  if (filters.event) clauses.push(`${searchAttributes.alertEvent.name} = ${quoted(filters.event)}`);
  if (filters.canaryId) {
    clauses.push(`${searchAttributes.canaryId.name} = ${quoted(filters.canaryId)}`);
  }
  if (filters.since) clauses.push(`StartTime >= ${quoted(filters.since.toISOString())}`);
  if (filters.until) clauses.push(`StartTime <= ${quoted(filters.until.toISOString())}`);
  return clauses.join(' AND ');
}

const snake = (name: string, prefix: string) => name.replace(prefix, '').toLowerCase();

function failureText(failure: proto.api.failure.v1.IFailure | null | undefined) {
  return failure?.message ?? undefined;
}

function durationText(d: google.protobuf.IDuration | null | undefined) {
  return d ? `${Number(d.seconds ?? 0) + (d.nanos ?? 0) / 1e9}s` : undefined;
}

/** One history event as a step; activity events name their activity through the scheduled one. */
function stepOf(event: HistoryEvent, activities: Map<number, string>): RunStep {
  const type = snake(proto.api.enums.v1.EventType[event.eventType ?? 0] ?? '', 'EVENT_TYPE_');
  const step: RunStep = { eventId: Number(event.eventId ?? 0), at: dateOf(event.eventTime), type };
  const scheduled = event.activityTaskScheduledEventAttributes;
  if (scheduled) {
    step.activity = scheduled.activityType?.name ?? undefined;
    activities.set(step.eventId, step.activity ?? '');
  }
  const of = (id: unknown) => activities.get(Number(id ?? 0));
  const started = event.activityTaskStartedEventAttributes;
  if (started) {
    step.activity = of(started.scheduledEventId);
    step.attempt = started.attempt ?? undefined;
    step.detail = failureText(started.lastFailure);
  }
  const completed = event.activityTaskCompletedEventAttributes;
  if (completed) step.activity = of(completed.scheduledEventId);
  const failed = event.activityTaskFailedEventAttributes;
  if (failed) {
    step.activity = of(failed.scheduledEventId);
    step.detail = failureText(failed.failure);
  }
  const timedOut = event.activityTaskTimedOutEventAttributes;
  if (timedOut) {
    step.activity = of(timedOut.scheduledEventId);
    step.detail = failureText(timedOut.failure);
  }
  const timer = event.timerStartedEventAttributes;
  if (timer) step.detail = durationText(timer.startToFireTimeout);
  const signal = event.workflowExecutionSignaledEventAttributes;
  if (signal) step.detail = signal.signalName ?? undefined;
  const wfFailed = event.workflowExecutionFailedEventAttributes;
  if (wfFailed) step.detail = failureText(wfFailed.failure);
  const taskFailed = event.workflowTaskFailedEventAttributes;
  if (taskFailed) step.detail = failureText(taskFailed.failure);
  return step;
}

/** Workflow and activity tasks are the SDK's own bookkeeping, not part of a run's story. */
const BOOKKEEPING = new Set([
  'workflow_task_scheduled',
  'workflow_task_started',
  'workflow_task_completed',
  'marker_recorded',
  'upsert_workflow_search_attributes',
  'workflow_properties_modified',
]);

/**
 * A tenant's own workflow runs, from Temporal's visibility and histories: what the Temporal UI
 * would show them, filtered to the `AccountId` search attribute every workflow start sets.
 */
export class WorkflowRuns {
  constructor(private readonly temporal: Temporal) {}

  private get namespace() {
    return this.temporal.client.options.namespace;
  }

  /** One page, newest first; `pageToken` continues where the previous page ended. */
  async list(
    accountId: string,
    filters: RunFilters,
    limit: number,
    pageToken?: Buffer,
  ): Promise<{ runs: RunSummary[]; nextPageToken: Buffer | null }> {
    const answer = await this.temporal.client.workflowService.listWorkflowExecutions({
      namespace: this.namespace,
      query: visibilityQuery(accountId, filters),
      pageSize: limit,
      nextPageToken: pageToken,
    });
    const token = answer.nextPageToken;
    return {
      runs: answer.executions.map(summaryOf),
      nextPageToken: token && token.length > 0 ? Buffer.from(token) : null,
    };
  }

  /**
   * One run and its story, or a 404 when it does not exist or belongs to another account (the
   * answer must not tell another tenant's run ids from unknown ones).
   */
  async story(
    accountId: string,
    workflowId: string,
  ): Promise<{ run: RunSummary; steps: RunStep[] }> {
    const notFound = () => new DomainError('not_found', `No workflow run ${workflowId}`);
    const handle = this.temporal.client.workflow.getHandle(workflowId);
    let description;
    try {
      description = await handle.describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw notFound();
      throw err;
    }
    const run = summaryOf(description.raw.workflowExecutionInfo ?? {});
    if (
      keyword(description.raw.workflowExecutionInfo ?? {}, searchAttributes.accountId.name) !==
      accountId
    ) {
      throw notFound();
    }
    const history = await this.temporal.client.workflow
      .getHandle(workflowId, run.runId)
      .fetchHistory();
    const activities = new Map<number, string>();
    const steps = (history.events ?? [])
      .map((event) => stepOf(event, activities))
      .filter((step) => !BOOKKEEPING.has(step.type));
    return { run, steps };
  }
}
