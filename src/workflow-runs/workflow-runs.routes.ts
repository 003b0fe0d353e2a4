import { z } from 'zod';
import { callerAccountId } from '../auth/caller';
import { operationsFor } from '../http/operation';
import { cursorSchema, encodeCursor, limitSchema } from '../http/pagination';
import {
  QUERY_SAFE,
  RUN_STATUSES,
  type RunStep,
  type RunSummary,
  type WorkflowRuns,
} from './workflow-runs';

const queryValue = z.string().regex(QUERY_SAFE, 'letters, digits and _ . : @ - only');

const listQuery = z
  .object({
    limit: limitSchema,
    /** Temporal's own page token, carried opaquely. */
    cursor: cursorSchema(z.string().min(1)).optional(),
    status: z.enum(RUN_STATUSES).optional(),
    event: queryValue.optional(),
    canary_id: queryValue.optional(),
    since: z.iso.datetime().optional(),
    until: z.iso.datetime().optional(),
  })
  .strict()
  .refine((q) => !q.since || !q.until || Date.parse(q.since) <= Date.parse(q.until), {
    path: ['until'],
    message: 'not before since',
  });

const runView = z
  .object({
    workflow_id: z.string(),
    run_id: z.string(),
    workflow_type: z.string(),
    status: z.enum(RUN_STATUSES),
    outcome: z.string().nullable(),
    event: z.string().nullable(),
    canary_id: z.string().nullable(),
    started_at: z.iso.datetime().nullable(),
    closed_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'WorkflowRun' });

const stepView = z
  .object({
    event_id: z.number().int(),
    at: z.iso.datetime().nullable(),
    type: z.string(),
    activity: z.string().optional(),
    attempt: z.number().int().optional(),
    detail: z.string().optional(),
  })
  .meta({ id: 'WorkflowRunStep' });

const iso = (d: Date | null) => d?.toISOString() ?? null;

function describeRun(run: RunSummary): z.output<typeof runView> {
  return {
    workflow_id: run.workflowId,
    run_id: run.runId,
    workflow_type: run.workflowType,
    status: run.status,
    outcome: run.outcome,
    event: run.event,
    canary_id: run.canaryId,
    started_at: iso(run.startedAt),
    closed_at: iso(run.closedAt),
  };
}

function describeStep(step: RunStep): z.output<typeof stepView> {
  const { eventId, at, ...rest } = step;
  return { event_id: eventId, at: iso(at), ...rest };
}

const operation = operationsFor<WorkflowRuns>('Workflow runs');

/**
 * `/api/workflow-runs`: the caller's own alert, resend, channel-test, agent-watch and worker-ping
 * workflows, what the Temporal UI shows, which no tenant of a shared deployment may open.
 */
export const workflowRunOperations = [
  operation({
    operationId: 'listWorkflowRuns',
    method: 'get',
    path: '/api/workflow-runs',
    summary: "The caller's workflow runs",
    description:
      "From Temporal's visibility, newest first, only runs started for the caller's account. Filters: `status`, `event`, `canary_id`, `since`/`until` (start time). Visibility lags a run's start or end by a moment.",
    auth: 'sessionOrApiKey',
    query: listQuery,
    success: { status: 200, description: '`{workflow_runs, next_cursor}`' },
    response: z.object({ workflow_runs: z.array(runView), next_cursor: z.string().nullable() }),
    handler: async ({ query, res }, runs) => {
      const page = await runs.list(
        callerAccountId(res),
        {
          status: query.status,
          event: query.event,
          canaryId: query.canary_id,
          since: query.since ? new Date(query.since) : undefined,
          until: query.until ? new Date(query.until) : undefined,
        },
        query.limit,
        query.cursor ? Buffer.from(query.cursor, 'base64') : undefined,
      );
      return {
        workflow_runs: page.runs.map(describeRun),
        next_cursor: page.nextPageToken
          ? encodeCursor(page.nextPageToken.toString('base64'))
          : null,
      };
    },
  }),
  operation({
    operationId: 'getWorkflowRun',
    method: 'get',
    path: '/api/workflow-runs/{workflow_id}',
    summary: "One run's story",
    description:
      "The run and its history's steps: each activity attempt and its failure, each recovery, each timer and signal. Another account's run is a 404, as an unknown id is.",
    auth: 'sessionOrApiKey',
    success: { status: 200, description: '`{workflow_run, steps}`' },
    response: z.object({ workflow_run: runView, steps: z.array(stepView) }),
    errors: { 404: 'No such run of this account' },
    handler: async ({ params, res }, runs) => {
      const { run, steps } = await runs.story(callerAccountId(res), params.workflow_id!);
      return { workflow_run: describeRun(run), steps: steps.map(describeStep) };
    },
  }),
];
