import { useState } from 'preact/hooks';
import type { z } from 'zod';
import type { weeklyView } from '../../../src/weekly/weekly.routes';
import { api } from '../api';
import type { ChannelList } from '../types';
import { ErrorNote, Field, formValues, useAction, useLoad } from '../ui';

type Weekly = z.output<typeof weeklyView>;

const WEEKDAYS: Weekly['weekday'][] = [
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
];
const BUILT_INS = [
  { id: 'builtin:email', name: 'Account email (built-in)' },
  { id: 'builtin:chat', name: 'Telegram chat (built-in)' },
];

/** When and where the weekly digest goes, and a button that sends it now. */
export function WeeklyDigestView() {
  const weekly = useLoad(() => api<Weekly>('GET', '/api/weekly'));
  const channels = useLoad(() => api<ChannelList>('GET', '/api/alert-channels'));
  const saving = useAction();
  const sending = useAction();
  const [note, setNote] = useState<string | null>(null);

  const save = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const values = formValues(form);
    const chosen = [...form.querySelectorAll<HTMLInputElement>('input[name="channel"]:checked')];
    setNote(null);
    void saving.run(async () => {
      const saved = await api<Weekly>('PUT', '/api/weekly', {
        enabled: values.enabled === 'on',
        weekday: values.weekday,
        hour: Number(values.hour),
        time_zone: values.time_zone,
        channels: chosen.map((input) => input.value),
      });
      await weekly.reload();
      setNote(
        saved.schedule_synced
          ? 'Saved.'
          : 'Saved. The schedule follows as soon as the workflow service answers.',
      );
    });
  };
  const sendNow = () => {
    setNote(null);
    void sending.run(async () => {
      await api('POST', '/api/weekly/send-now');
      setNote("Digest on its way: see each channel's deliveries.");
    });
  };

  const settings = weekly.data;
  const options = [...BUILT_INS, ...(channels.data?.channels ?? [])];
  return (
    <section aria-labelledby="weekly-title">
      <h1 id="weekly-title">Weekly digest</h1>
      <p>
        Once a week: what fired, by canary and day, where it came from, and whether your channels
        were told.
      </p>
      <ErrorNote error={weekly.error ?? channels.error} />
      {settings && (
        <form onSubmit={save} data-testid="weekly-digest">
          <label>
            <input type="checkbox" name="enabled" defaultChecked={settings.enabled} /> Send the
            weekly digest
          </label>
          <Field label="Day">
            <select name="weekday" defaultValue={settings.weekday}>
              {WEEKDAYS.map((day) => (
                <option key={day} value={day}>
                  {day[0]!.toUpperCase() + day.slice(1)}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Hour">
            <select name="hour" defaultValue={String(settings.hour)}>
              {Array.from({ length: 24 }, (_, hour) => (
                <option key={hour} value={String(hour)}>
                  {String(hour).padStart(2, '0')}:00
                </option>
              ))}
            </select>
          </Field>
          <Field label="Time zone" hint="An IANA name, such as Europe/Berlin.">
            <input name="time_zone" defaultValue={settings.time_zone} required maxLength={64} />
          </Field>
          <fieldset>
            <legend>Channels</legend>
            {options.map((channel) => (
              <label key={channel.id}>
                <input
                  type="checkbox"
                  name="channel"
                  value={channel.id}
                  defaultChecked={settings.channels.includes(channel.id)}
                />{' '}
                {channel.name}
              </label>
            ))}
          </fieldset>
          <ErrorNote error={saving.error ?? sending.error} />
          {note && (
            <p class="note ok" role="status">
              {note}
            </p>
          )}
          <button type="submit" disabled={saving.pending}>
            Save
          </button>{' '}
          <button type="button" onClick={sendNow} disabled={sending.pending}>
            Send now
          </button>
        </form>
      )}
    </section>
  );
}
