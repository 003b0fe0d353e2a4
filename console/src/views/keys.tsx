import { useState } from 'preact/hooks';
import { api } from '../api';
import type { ApiKey, KeyList, NewKey } from '../types';
import {
  ConfirmButton,
  CopyButton,
  ErrorNote,
  Field,
  formValues,
  Table,
  Time,
  useAction,
  useLoad,
} from '../ui';

/** API keys: made here with every scope (no scopes sent), shown in full exactly once. */
export function KeysView() {
  const keys = useLoad(() => api<KeyList>('GET', '/api/auth/keys'));
  const action = useAction();
  const [fresh, setFresh] = useState<NewKey | null>(null);

  const generate = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const name = formValues(form).name?.trim();
    void action.run(async () => {
      setFresh(await api<NewKey>('POST', '/api/auth/generate-key', name ? { name } : {}));
      form.reset();
      await keys.reload();
    });
  };
  const revoke = (key: ApiKey) =>
    void action.run(async () => {
      await api('DELETE', `/api/auth/keys/${encodeURIComponent(key.id)}`);
      if (fresh?.id === key.id) setFresh(null);
      await keys.reload();
    });

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      <p>
        Send a key as <code>X-API-Key</code>. Keys made here carry every scope (<code>*</code>); an
        account has at most five active keys.
      </p>
      <form class="inline" onSubmit={generate}>
        <Field label="Key name (optional)">
          <input name="name" maxLength={100} placeholder="ci-pipeline" />
        </Field>
        <button type="submit" disabled={action.pending}>
          Generate API key
        </button>
      </form>
      <ErrorNote error={action.error} />
      {fresh && (
        <div class="note warning" role="status" data-testid="new-key">
          <p>
            <strong>Copy this key now: it is shown only this once.</strong> The service keeps only a
            hash of it; lose it and you will need a new key.
          </p>
          <p class="secret">
            <code data-testid="new-key-value">{fresh.key}</code> <CopyButton text={fresh.key} />
          </p>
          <button type="button" class="secondary" onClick={() => setFresh(null)}>
            I have stored it
          </button>
        </div>
      )}
      <h2>Active keys</h2>
      <ErrorNote error={keys.error} />
      {keys.data?.keys.length === 0 && <p>No active keys.</p>}
      {!!keys.data?.keys.length && (
        <Table label="Active API keys">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Starts with</th>
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data.keys.map((key) => (
              <tr key={key.id}>
                <th scope="row">{key.name}</th>
                <td data-label="Starts with">
                  <code>{key.prefix}…</code>
                </td>
                <td data-label="Scopes">{key.scopes.join(' ')}</td>
                <td data-label="Created">
                  <Time iso={key.created_at} />
                </td>
                <td data-label="Last used">
                  <Time iso={key.last_used_at} />
                </td>
                <td>
                  <ConfirmButton
                    label="Revoke"
                    name={`Revoke ${key.name}`}
                    question={`Revoke the key "${key.name}" (${key.prefix}…)? Anything using it stops working at once.`}
                    confirm="Revoke key"
                    onConfirm={() => revoke(key)}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </section>
  );
}
