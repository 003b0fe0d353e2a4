import { api } from '../api';
import { ErrorNote, Table, Time, usePages } from '../ui';

/** One run as `GET /api/workflow-runs` lists it. */
interface WorkflowRun {
  workflow_id: string;
  workflow_type: string;
  status: string;
  outcome: string | null;
  event: string | null;
  canary_id: string | null;
  started_at: string | null;
  closed_at: string | null;
}

interface WorkflowRunPage {
  workflow_runs: WorkflowRun[];
  next_cursor: string | null;
}

/**
 * The account's own alert, resend, test and agent-watch workflows: what the Temporal UI would
 * show this tenant, which a shared deployment cannot let it open.
 */
export function WorkflowRunsView() {
  const list = usePages(
    (cursor) =>
      api<WorkflowRunPage>(
        'GET',
        `/api/workflow-runs?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ),
    (page) => page.workflow_runs,
    (page) => page.next_cursor,
  );
  const { items: runs, more } = list;
  return (
    <section aria-labelledby="runs-title">
      <h1 id="runs-title">Workflow runs</h1>
      <button type="button" class="secondary" onClick={() => void list.reload()}>
        Refresh
      </button>
      <ErrorNote error={list.error} />
      {list.loaded && !runs.length && <p>No workflow has run for this account yet.</p>}
      {runs.length > 0 && (
        <Table label="Workflow runs">
          <thead>
            <tr>
              <th>Workflow</th>
              <th>Status</th>
              <th>Outcome</th>
              <th>Started</th>
              <th>Closed</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((run) => (
              <tr key={`${run.workflow_id}/${run.started_at ?? ''}`} data-testid="workflow-run">
                <td>
                  <code>{run.workflow_id}</code> ({run.workflow_type}
                  {run.event ? `, ${run.event}` : ''})
                </td>
                <td>{run.status}</td>
                <td>{run.outcome ?? '—'}</td>
                <td>
                  <Time iso={run.started_at} />
                </td>
                <td>
                  <Time iso={run.closed_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {more && (
        <button type="button" class="secondary" onClick={() => void more()} disabled={list.pending}>
          Load older runs
        </button>
      )}
    </section>
  );
}
