import { useState } from 'preact/hooks';
import { api, download, logout } from '../api';
import type { Account, Usage } from '../types';
import { CopyButton, ErrorNote, Field, formValues, Table, useAction, useLoad } from '../ui';

const METRIC_NAMES: Record<string, string> = {
  shield_inspections: 'Shield inspections',
  canary_plants: 'Canaries planted',
};

function metricName(metric: string): string {
  const [, action, horizon] = /^(.*)_per_(month|day)$/.exec(metric) ?? [];
  if (!action) return metric;
  return `${METRIC_NAMES[action] ?? action} ${horizon === 'day' ? 'today' : 'this month'}`;
}

/** The account id every API call names, the plan, and what has been used of it. */
export function AccountView({ account }: { account: Account }) {
  const usage = useLoad(() => api<Usage>('GET', '/api/usage'));
  return (
    <section aria-labelledby="account-title">
      <h1 id="account-title">Account</h1>
      <dl class="facts">
        <dt>Account id</dt>
        <dd>
          <code data-testid="account-id">{account.user_id}</code>{' '}
          <CopyButton text={account.user_id} />
        </dd>
        <dt>Email</dt>
        <dd>{account.email}</dd>
        <dt>Plan</dt>
        <dd>{usage.data?.plan_display_name ?? account.plan}</dd>
      </dl>
      <p>
        Use the account id as <code>user_id</code> in API calls. The full API reference is at{' '}
        <a href="/docs">/docs</a>.
      </p>
      <h2>Usage</h2>
      <ErrorNote error={usage.error} />
      {usage.data && (
        <Table label="Usage per metric">
          <thead>
            <tr>
              <th scope="col">Metric</th>
              <th scope="col">Used</th>
              <th scope="col">Limit</th>
              <th scope="col">Resets</th>
            </tr>
          </thead>
          <tbody>
            {usage.data.metrics.map((m) => (
              <tr key={m.metric}>
                <th scope="row">{metricName(m.metric)}</th>
                <td data-label="Used">{m.used}</td>
                <td data-label="Limit">{m.limit}</td>
                <td data-label="Resets">
                  <time dateTime={m.resets_at}>{m.resets_at} 00:00 UTC</time>
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <PasswordChange />
      <YourData account={account} />
    </section>
  );
}

/** The current password again, then the new one; the account's other sessions are signed out. */
function PasswordChange() {
  const { pending, error, run } = useAction();
  const [done, setDone] = useState(false);
  const submit = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const { current_password = '', new_password = '' } = formValues(form);
    setDone(false);
    void run(async () => {
      await api('POST', '/api/users/me/password', { current_password, new_password });
      form.reset();
      setDone(true);
    });
  };
  return (
    <>
      <h2>Password</h2>
      <form onSubmit={submit} data-testid="password-change">
        <Field label="Current password">
          <input name="current_password" type="password" autocomplete="current-password" required />
        </Field>
        <Field label="New password" hint="At least 12 characters.">
          <input
            name="new_password"
            type="password"
            autocomplete="new-password"
            minLength={12}
            required
          />
        </Field>
        <ErrorNote error={error} />
        {done && (
          <p class="note ok" role="status">
            Password changed. Your other sessions have been signed out.
          </p>
        )}
        <button type="submit" disabled={pending}>
          Change password
        </button>
      </form>
    </>
  );
}

/** The words the erase form asks for, as the API does: an erasure cannot be undone. */
const ERASE_CONFIRMATION = 'erase my account';

/**
 * Everything held about the account as one JSON file, and the erasure: personal values go, the
 * sealed log stays verifiable (docs/evidence.md).
 */
function YourData({ account }: { account: Account }) {
  const exporting = useAction();
  const erasing = useAction();
  const erase = (event: Event) => {
    event.preventDefault();
    const { password = '', confirm = '' } = formValues(event.currentTarget as HTMLFormElement);
    void erasing.run(async () => {
      await api('POST', '/api/privacy/erase', { password, confirm });
      await logout();
      location.reload();
    });
  };
  return (
    <>
      <h2>Your data</h2>
      <p>
        Download everything this service holds about you: the account, keys (without secrets),
        canaries, threat events, channels (without secrets), deliveries and sealed evidence.
      </p>
      <ErrorNote error={exporting.error} />
      <button
        type="button"
        disabled={exporting.pending}
        onClick={() =>
          void exporting.run(() =>
            download('/api/privacy/export', `privacy-export-${account.user_id}.json`),
          )
        }
      >
        Download my data
      </button>
      <form onSubmit={erase} data-testid="erase-account">
        <p>
          Erasing the account signs you out everywhere and deletes its keys, canaries, events and
          channels. Personal values in the sealed evidence become unreadable; the log itself still
          verifies. This cannot be undone.
        </p>
        <Field label="Password">
          <input name="password" type="password" autocomplete="current-password" required />
        </Field>
        <Field label={`Type "${ERASE_CONFIRMATION}" to confirm`}>
          <input name="confirm" required pattern={ERASE_CONFIRMATION} autocomplete="off" />
        </Field>
        <ErrorNote error={erasing.error} />
        <button type="submit" class="danger" disabled={erasing.pending}>
          Erase my account
        </button>
      </form>
    </>
  );
}
