import { useState } from 'preact/hooks';
import { api } from '../api';
import {
  ALERT_EVENTS,
  type Account,
  type AlertLevel,
  type BulkResent,
  type Channel,
  type ChannelList,
  type ChannelTest,
  type Delivery,
  type DeliveryList,
  type Resent,
  type Settings,
} from '../types';
import {
  ConfirmButton,
  ErrorNote,
  Field,
  formValues,
  Table,
  Time,
  useAction,
  useLoad,
} from '../ui';

/** The service's own rule for webhook secrets, checked here before anything is sent. */
const MIN_SECRET = 16;

const KIND_NAMES: Record<Channel['kind'], string> = {
  webhook: 'Generic webhook (HMAC-signed)',
  slack: 'Slack incoming webhook',
  discord: 'Discord webhook',
  teams: 'Microsoft Teams workflows webhook',
  pagerduty: 'PagerDuty Events API v2',
};

/** The kinds whose channels have a secret, and what it is. */
const SECRET_LABELS: Partial<Record<Channel['kind'], { label: string; hint: string }>> = {
  webhook: {
    label: 'Signing secret',
    hint: `At least ${MIN_SECRET} characters. It signs each delivery (HMAC-SHA256) and is never shown again.`,
  },
  pagerduty: {
    label: 'Routing key',
    hint: 'The integration key of a PagerDuty service (Events API v2); never shown again.',
  },
};

const LEVELS: AlertLevel[] = ['MEDIUM', 'HIGH', 'CRITICAL'];

/** What a channel receives, in words. */
function routingText(channel: Channel): string {
  const events = channel.events ? channel.events.join(', ') : 'every event';
  const level = channel.minLevel ? `${channel.minLevel} and above` : 'any level';
  return `Receives ${events}, ${level}; tests always.`;
}

/** Alert channels: add, enable or disable, test, delete, and what each delivery did. */
export function ChannelsView({ account }: { account: Account }) {
  const channels = useLoad(() => api<ChannelList>('GET', '/api/alert-channels'));
  const adding = useAction();
  const [kind, setKind] = useState<Channel['kind']>('webhook');
  const [secretError, setSecretError] = useState<string | null>(null);

  const add = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const { name = '', url = '', secret = '', minLevel = '' } = formValues(form);
    const secretKind = SECRET_LABELS[kind];
    const events = ALERT_EVENTS.filter(
      (e) => (form.elements.namedItem(e) as HTMLInputElement | null)?.checked,
    );
    const standard = (form.elements.namedItem('standardWebhooks') as HTMLInputElement | null)
      ?.checked;
    if (secretKind && secret.length < MIN_SECRET) {
      setSecretError(
        `The secret needs at least ${MIN_SECRET} characters (it has ${secret.length}).`,
      );
      (form.elements.namedItem('secret') as HTMLInputElement).focus();
      return;
    }
    setSecretError(null);
    void adding.run(async () => {
      await api('POST', '/api/alert-channels', {
        kind,
        name,
        url,
        ...(secretKind && { secret }),
        ...(minLevel && { minLevel }),
        ...(events.length < ALERT_EVENTS.length && { events }),
        ...(kind === 'webhook' && { standardWebhooks: Boolean(standard) }),
      });
      form.reset();
      await channels.reload();
    });
  };

  return (
    <section aria-labelledby="channels-title">
      <h1 id="channels-title">Alert channels</h1>
      <p>
        When a canary fires, every enabled channel that subscribes to the alert gets it (10 s
        timeout, up to three attempts); a failed delivery can be sent again from its record. URLs
        must be HTTPS on a public address.
      </p>
      <h2>Add a channel</h2>
      <form onSubmit={add} noValidate>
        <Field label="Kind">
          <select
            name="kind"
            value={kind}
            onChange={(e) => setKind(e.currentTarget.value as Channel['kind'])}
          >
            {Object.entries(KIND_NAMES).map(([value, name]) => (
              <option key={value} value={value}>
                {name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Name">
          <input name="name" required maxLength={100} />
        </Field>
        <Field label="URL">
          <input name="url" type="url" required placeholder="https://" />
        </Field>
        {SECRET_LABELS[kind] && (
          <Field label={SECRET_LABELS[kind].label} hint={SECRET_LABELS[kind].hint}>
            <input
              name="secret"
              type="password"
              autocomplete="off"
              aria-invalid={secretError ? 'true' : undefined}
              aria-describedby={secretError ? 'secret-error' : undefined}
            />
          </Field>
        )}
        {secretError && (
          <p id="secret-error" class="note error" role="alert">
            {secretError}
          </p>
        )}
        <Field label="Lowest alert level" hint="Alerts below it are not sent to this channel.">
          <select name="minLevel">
            <option value="">Any level</option>
            {LEVELS.map((level) => (
              <option key={level} value={level}>
                {level}
              </option>
            ))}
          </select>
        </Field>
        <fieldset>
          <legend>Events (tests always reach the channel tested)</legend>
          {ALERT_EVENTS.map((event) => (
            <label key={event}>
              <input type="checkbox" name={event} defaultChecked /> {event}
            </label>
          ))}
        </fieldset>
        {kind === 'webhook' && (
          <label>
            <input type="checkbox" name="standardWebhooks" /> Also send Standard Webhooks headers
            (webhook-id, webhook-timestamp, webhook-signature)
          </label>
        )}
        <ErrorNote error={adding.error} />
        <button type="submit" disabled={adding.pending}>
          Add channel
        </button>
      </form>
      <h2>Channels</h2>
      <ErrorNote error={channels.error} />
      {channels.data?.channels.length === 0 && (
        <p>
          No channels yet: alerts go only to the built-in channels below. Add a webhook, Slack,
          Teams, Discord or PagerDuty channel above to be told where you work.
        </p>
      )}
      <ul class="cards">
        {channels.data?.channels.map((channel) => (
          <ChannelCard key={channel.id} channel={channel} changed={channels.reload} />
        ))}
      </ul>
      <BuiltInChannels email={account.email} />
    </section>
  );
}

/** Every account has them when the operator configured them: email, and a Telegram chat. */
function BuiltInChannels({ email }: { email: string }) {
  const settings = useLoad(() => api<Settings>('GET', '/api/settings'));
  const saving = useAction();
  const [saved, setSaved] = useState(false);
  const save = (event: Event) => {
    event.preventDefault();
    const chatId = formValues(event.currentTarget as HTMLFormElement).chat?.trim() ?? '';
    void saving.run(async () => {
      setSaved(false);
      await api('PATCH', '/api/settings', { telegram_chat_id: chatId || null });
      await settings.reload();
      setSaved(true);
    });
  };
  return (
    <>
      <h2>Built-in channels</h2>
      <p>
        When the service has an SMTP server and a Telegram bot configured, alerts also go by email
        to <strong>{email}</strong> and to the Telegram chat below. A delivery that could not be
        made says why in its record.
      </p>
      <ErrorNote error={settings.error} />
      {settings.data && (
        <form class="inline" onSubmit={save}>
          <Field
            label="Telegram chat id"
            hint="A numeric chat id or an @channel name; empty turns it off."
          >
            <input name="chat" defaultValue={settings.data.telegram_chat_id ?? ''} maxLength={33} />
          </Field>
          <button type="submit" disabled={saving.pending}>
            Save
          </button>
        </form>
      )}
      <ErrorNote error={saving.error} />
      {saved && <p role="status">Saved.</p>}
      <details>
        <summary>Email deliveries</summary>
        <Deliveries path="/api/alert-channels/builtin:email/deliveries" />
      </details>
      <details>
        <summary>Telegram deliveries</summary>
        <Deliveries path="/api/alert-channels/builtin:chat/deliveries" />
      </details>
    </>
  );
}

function ChannelCard({ channel, changed }: { channel: Channel; changed: () => Promise<void> }) {
  const action = useAction();
  const [test, setTest] = useState<ChannelTest | null>(null);
  const [showDeliveries, setShowDeliveries] = useState(false);
  const path = `/api/alert-channels/${encodeURIComponent(channel.id)}`;

  const sendTest = () =>
    void action.run(async () => {
      setTest(null);
      setTest(await api<ChannelTest>('POST', `${path}/test`));
      await changed();
    });
  const toggle = () =>
    void action.run(async () => {
      await api('PATCH', path, { disabled: !channel.disabled });
      await changed();
    });
  const remove = () =>
    void action.run(async () => {
      await api('DELETE', path);
      await changed();
    });

  return (
    <li class="card" aria-labelledby={`channel-${channel.id}`}>
      <h3 id={`channel-${channel.id}`}>
        {channel.name} <span class="badge">{channel.kind}</span>{' '}
        <span class={channel.disabled ? 'badge muted' : 'badge ok'}>
          {channel.disabled ? 'disabled' : 'enabled'}
        </span>
      </h3>
      <p class="url">{channel.url}</p>
      {channel.disabledReason && (
        <p class="note error" data-testid="disabled-reason">
          Disabled by the service <Time iso={channel.disabledAt} />: {channel.disabledReason}.
          Enabling it starts its health clock again.
        </p>
      )}
      <p data-testid="routing">{routingText(channel)}</p>
      <p>
        Last delivery: <Time iso={channel.lastDeliveryAt} />
      </p>
      <Health
        path={`${path}/deliveries`}
        changed={[channel.lastDeliveryAt, channel.lastError?.at]}
      />
      {channel.lastError && (
        <p class="note error" data-testid="last-error">
          Last error{channel.lastError.status !== null && ` (${channel.lastError.status})`}:{' '}
          {channel.lastError.message} — <Time iso={channel.lastError.at} />
        </p>
      )}
      <div class="actions">
        <button type="button" onClick={sendTest} disabled={action.pending}>
          Send test
        </button>
        <button type="button" class="secondary" onClick={toggle} disabled={action.pending}>
          {channel.disabled ? 'Enable' : 'Disable'}
        </button>
        <button
          type="button"
          class="secondary"
          aria-expanded={showDeliveries}
          onClick={() => setShowDeliveries(!showDeliveries)}
        >
          {showDeliveries ? 'Hide deliveries' : 'Recent deliveries'}
        </button>
        <ConfirmButton
          label="Delete"
          name={`Delete ${channel.name}`}
          question={`Delete the channel "${channel.name}"? It gets no more alerts.`}
          confirm="Delete channel"
          onConfirm={remove}
        />
      </div>
      <div role="status" data-testid="test-outcome">
        {action.pending && 'Working…'}
        {test &&
          (test.outcome === 'delivered'
            ? `Test delivered (${test.status ?? 'no status'}).`
            : `Test ${test.outcome}: ${test.error ?? 'no details'}${test.status !== null ? ` (${test.status})` : ''}.`)}
      </div>
      <ErrorNote error={action.error} />
      {showDeliveries && <Deliveries path={`${path}/deliveries`} />}
    </li>
  );
}

/** How the channel has done lately: its latest 50 deliveries' outcomes, read again after each. */
function Health({ path, changed }: { path: string; changed: unknown[] }) {
  const recent = useLoad(() => api<DeliveryList>('GET', path), [path, ...changed]);
  if (!recent.data) return null;
  const states = recent.data.deliveries.map(deliveryState);
  const finished = states.filter((s) => s === 'delivered' || s === 'failed');
  if (!finished.length) return <p data-testid="health">No alert delivered or failed yet.</p>;
  const delivered = finished.filter((s) => s === 'delivered').length;
  const recovering = states.filter((s) => s === 'recovering').length;
  return (
    <p data-testid="health">
      Recent success rate: {Math.round((delivered / finished.length) * 100)}% ({delivered} of{' '}
      {finished.length} delivered)
      {recovering > 0 && `, ${recovering} recovering`}
    </p>
  );
}

function Deliveries({ path }: { path: string }) {
  const deliveries = useLoad(() => api<DeliveryList>('GET', path), [path]);
  const resending = useAction();
  const [resent, setResent] = useState<string | null>(null);
  const resendFailed = (event: Event) => {
    event.preventDefault();
    const { since = '' } = formValues(event.currentTarget as HTMLFormElement);
    void resending.run(async () => {
      const answer = await api<BulkResent>('POST', `${path}/resend-failed`, {
        since: new Date(since).toISOString(),
      });
      setResent(
        `${answer.resent.length} failed deliveries sent again${answer.more ? ' (more remain: send again)' : ''}.`,
      );
      await deliveries.reload();
    });
  };
  if (deliveries.error) return <ErrorNote error={deliveries.error} />;
  if (!deliveries.data) return <p>Loading…</p>;
  if (!deliveries.data.deliveries.length)
    return <p>No deliveries yet: “Send test” shows what this channel receives.</p>;
  return (
    <>
      <form class="inline" onSubmit={resendFailed}>
        <Field
          label="Failed since"
          hint="Every alert that failed to arrive since then is sent again, once."
        >
          <input name="since" type="datetime-local" required />
        </Field>
        <button type="submit" class="secondary" disabled={resending.pending}>
          Resend failed
        </button>
      </form>
      <div role="status">{resent}</div>
      <ErrorNote error={resending.error} />
      <DeliveryTable
        label="Recent deliveries"
        path={path}
        deliveries={deliveries.data.deliveries}
        changed={deliveries.reload}
      />
    </>
  );
}

/** What a delivery record says: its outcome, or, while none is recorded, whether it is retrying. */
export function deliveryState(d: Delivery): string {
  if (d.outcome) return d.outcome;
  return d.attempts.some((a) => a.error !== null || (a.status ?? 0) >= 300)
    ? 'recovering'
    : 'sending';
}

/** Deliveries with every attempt (status, duration, the receiver's answer) and a resend button. */
export function DeliveryTable({
  label,
  path,
  deliveries,
  changed,
}: {
  label: string;
  /** The channel's deliveries path, which the resend is posted under. */
  path: string;
  deliveries: Delivery[];
  changed: () => Promise<void>;
}) {
  const resending = useAction();
  const [resent, setResent] = useState<string | null>(null);
  const resend = (deliveryId: string) =>
    void resending.run(async () => {
      const answer = await api<Resent>('POST', `${path}/${encodeURIComponent(deliveryId)}/resend`);
      setResent(`Sent again as ${answer.deliveryId}.`);
      await changed();
    });
  return (
    <>
      <div role="status" data-testid="resend-outcome">
        {resent}
      </div>
      <ErrorNote error={resending.error} />
      <Table label={label}>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Event</th>
            <th scope="col">Outcome</th>
            <th scope="col">Attempts</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => (
            <tr key={d.deliveryId}>
              <td data-label="When">
                <Time iso={d.createdAt} />
              </td>
              <td data-label="Event">
                {d.event}
                {d.resendOf && <div class="muted">resend of {d.resendOf}</div>}
              </td>
              <td data-label="Outcome">
                <span class={`badge state-${deliveryState(d)}`}>{deliveryState(d)}</span>
                {d.error && <div class="muted">{d.error}</div>}
              </td>
              <td data-label="Attempts">
                <ol class="attempts">
                  {d.attempts.map((a) => (
                    <li key={a.attempt}>
                      {a.status ?? 'no answer'} in {a.durationMs} ms
                      {a.error && ` — ${a.error}`}
                      {a.answer && a.answer.body && (
                        <details>
                          <summary>Answer ({a.answer.contentType ?? 'no content type'})</summary>
                          <pre class="answer">{a.answer.body}</pre>
                        </details>
                      )}
                    </li>
                  ))}
                </ol>
              </td>
              <td data-label="Actions">
                {d.outcome && (
                  <button
                    type="button"
                    class="secondary"
                    aria-label={`Resend delivery ${d.deliveryId}`}
                    onClick={() => resend(d.deliveryId)}
                    disabled={resending.pending}
                  >
                    Resend
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </Table>
    </>
  );
}
