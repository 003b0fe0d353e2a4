import { useState } from 'preact/hooks';
import { api } from '../api';
import type { AdminAccount, AdminAccountPage } from '../types';
import { ConfirmButton, ErrorNote, Field, Table, Time, useAction, usePages } from '../ui';

/** The plans: the record's keys must name exactly the server's, or the type check fails. */
const PLAN_SET: Record<AdminAccount['plan'], true> = { free: true, pro: true, enterprise: true };
const PLANS = Object.keys(PLAN_SET);

/** Operators only (the API refuses everyone else): find an account, change its plan, disable it. */
export function AdminView() {
  const [q, setQ] = useState('');
  const list = usePages(
    (cursor) =>
      api<AdminAccountPage>(
        'GET',
        `/api/admin/accounts?limit=50&q=${encodeURIComponent(q)}` +
          (cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''),
      ),
    (page) => page.accounts,
    (page) => page.next_cursor,
  );
  return (
    <section aria-labelledby="admin-title">
      <h1 id="admin-title">Admin</h1>
      <p>
        Every change here is sealed in the account&apos;s own evidence log, naming you as the
        operator.
      </p>
      <form
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          void list.reload();
        }}
      >
        <Field label="Email starts with">
          <input type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        </Field>
        <button type="submit">Search</button>
      </form>
      <ErrorNote error={list.error} />
      {list.loaded && (
        <Table label="Accounts">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Plan</th>
              <th scope="col">State</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((account) => (
              <AccountRow key={account.user_id} account={account} changed={list.reload} />
            ))}
          </tbody>
        </Table>
      )}
      {list.loaded && !list.items.length && <p>No account has an email starting so.</p>}
      {list.more && (
        <button type="button" class="secondary" onClick={() => void list.more?.()}>
          More accounts
        </button>
      )}
    </section>
  );
}

function AccountRow({ account, changed }: { account: AdminAccount; changed: () => unknown }) {
  const action = useAction();
  const [note, setNote] = useState<string | null>(null);
  const path = `/api/admin/accounts/${encodeURIComponent(account.user_id)}`;
  /** An action, then the list again; what it answers (if words) is shown beside the row. */
  const run = (call: () => Promise<unknown>) =>
    void action.run(async () => {
      const said = await call();
      setNote(typeof said === 'string' ? said : null);
      await changed();
    });
  const disabled = account.disabled_at !== null;
  return (
    <tr data-testid="admin-account">
      <td data-label="Email">
        {account.email}
        {account.role === 'operator' && <span class="badge">operator</span>}
      </td>
      <td data-label="Plan">
        <select
          aria-label={`Plan of ${account.email}`}
          value={account.plan}
          disabled={action.pending}
          onChange={(e) => run(() => api('PATCH', path, { plan: e.currentTarget.value }))}
        >
          {PLANS.map((plan) => (
            <option key={plan} value={plan}>
              {plan}
            </option>
          ))}
        </select>
      </td>
      <td data-label="State">
        {disabled ? (
          <>
            disabled <Time iso={account.disabled_at} />
          </>
        ) : (
          'active'
        )}
      </td>
      <td data-label="Created">
        <Time iso={account.created_at} />
      </td>
      <td data-label="Actions">
        <div class="actions">
          {disabled ? (
            <button
              type="button"
              class="secondary"
              onClick={() => run(() => api('POST', `${path}/enable`))}
            >
              Enable
            </button>
          ) : (
            <ConfirmButton
              label="Disable"
              name={`Disable ${account.email}`}
              question={`Disable ${account.email}? Its sessions end and its API keys are refused until it is enabled again; its canaries keep recording.`}
              confirm="Disable account"
              onConfirm={() => run(() => api('POST', `${path}/disable`))}
            />
          )}
          <button
            type="button"
            class="secondary"
            aria-label={`Sign ${account.email} out everywhere`}
            onClick={() =>
              run(async () => {
                const { sessions_ended } = await api<{ sessions_ended: number }>(
                  'POST',
                  `${path}/revoke-sessions`,
                );
                return `${sessions_ended} session${sessions_ended === 1 ? '' : 's'} ended`;
              })
            }
          >
            Sign out everywhere
          </button>
        </div>
        <span role="status">{note}</span>
        <ErrorNote error={action.error} />
      </td>
    </tr>
  );
}
