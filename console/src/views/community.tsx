import { useState } from 'preact/hooks';
import { api } from '../api';
import type { CommunityIndicators, Settings } from '../types';
import { ErrorNote, Table, Time, useAction, useLoad } from '../ui';

/**
 * Addresses that fired canaries in several workspaces, for the workspaces that share theirs:
 * the opt-in and the list. Which workspaces saw an address is never shown, nor kept here.
 */
export function CommunityView() {
  const settings = useLoad(() => api<Settings>('GET', '/api/settings'));
  const list = useLoad(
    () => api<CommunityIndicators>('GET', '/api/community/indicators'),
    [settings.data?.community_sharing],
  );
  const saving = useAction();
  // The box shows the choice at once; the saved setting follows (or the box goes back on error).
  const [chosen, setChosen] = useState<boolean | null>(null);
  const sharing = chosen ?? settings.data?.community_sharing ?? false;
  const toggle = (on: boolean) => {
    setChosen(on);
    void saving.run(async () => {
      try {
        await api('PATCH', '/api/settings', { community_sharing: on });
        await settings.reload();
      } finally {
        setChosen(null);
      }
    });
  };
  return (
    <section aria-labelledby="community-title">
      <h1 id="community-title">Community</h1>
      <p>
        Source addresses that fired canaries in several workspaces that share theirs, over the last
        30 days: likely scanners or thieves working through leaked credentials. Only workspaces that
        share see the list, and nobody learns which workspaces an address hit.
      </p>
      <ErrorNote error={settings.error} />
      {settings.data && (
        <label>
          <input
            type="checkbox"
            checked={sharing}
            disabled={saving.pending}
            onChange={(e) => toggle(e.currentTarget.checked)}
          />{' '}
          Share the addresses that fire my canaries, and see what others share
        </label>
      )}
      <ErrorNote error={saving.error} />
      <h2>Indicators</h2>
      <ErrorNote error={list.error} />
      {list.data &&
        (!list.data.sharing ? (
          <p data-testid="indicators">
            Turn sharing on to see the addresses other workspaces saw. Until then this workspace
            shares nothing.
          </p>
        ) : list.data.indicators.length ? (
          <Table label="Community indicators">
            <thead>
              <tr>
                <th scope="col">Address</th>
                <th scope="col">Workspaces</th>
                <th scope="col">Hits</th>
                <th scope="col">First seen</th>
                <th scope="col">Last seen</th>
              </tr>
            </thead>
            <tbody data-testid="indicators">
              {list.data.indicators.map((i) => (
                <tr key={i.ip}>
                  <td data-label="Address">
                    <code>{i.ip}</code>
                  </td>
                  <td data-label="Workspaces">{i.workspaces}</td>
                  <td data-label="Hits">{i.hits}</td>
                  <td data-label="First seen">
                    <Time iso={i.first_seen} />
                  </td>
                  <td data-label="Last seen">
                    <Time iso={i.last_seen} />
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        ) : (
          <p data-testid="indicators">
            No address has fired canaries in enough sharing workspaces in the last 30 days.
          </p>
        ))}
    </section>
  );
}
