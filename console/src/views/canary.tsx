import { useState } from 'preact/hooks';
import { api, download } from '../api';
import type { Canary, ThreatEventPage } from '../types';
import { CopyButton, ErrorNote, Time, useAction, useLoad } from '../ui';
import { HitsChart, hitsSince, RANGES, RangeSelect, type Range } from './overview';
import { eventTitle, HitSpan } from './threats';

/** One canary: what it is, where it was planted, its file, and its hits over time. */
export function CanaryView({ id }: { id: string }) {
  const [range, setRange] = useState<Range>('30d');
  const downloading = useAction();
  const data = useLoad(async () => {
    const now = Date.now();
    const path = encodeURIComponent(id);
    const [canary, read, { threat_events: events }] = await Promise.all([
      api<Canary>('GET', `/api/canaries/${path}`),
      hitsSince(new Date(now - RANGES[range].span), id),
      api<ThreatEventPage>('GET', `/api/threat-events?limit=20&canary_id=${path}`),
    ]);
    return { now, canary, ...read, events };
  }, [id, range]);
  if (data.error)
    return (
      <section aria-labelledby="canary-title">
        <h1 id="canary-title">Canary</h1>
        <ErrorNote error={data.error} />
        <a href="#/canaries">Back to canaries</a>
      </section>
    );
  if (!data.data) return <p>Loading…</p>;
  const { now, canary, hits, all, events } = data.data;
  return (
    <section aria-labelledby="canary-title">
      <p>
        <a href="#/canaries">← Canaries</a>
      </p>
      <h1 id="canary-title">
        {canary.kind} canary{canary.memo && `: ${canary.memo}`}
      </h1>
      <dl class="facts">
        <dt>Value</dt>
        <dd class="secret">
          <code>{canary.value}</code> <CopyButton text={canary.value} label="Copy value" />
        </dd>
        <dt>Memo</dt>
        <dd>{canary.memo || 'none (a memo says which decoy leaked when it fires)'}</dd>
        <dt>Planted</dt>
        <dd>
          <Time iso={canary.created_at} />
          {canary.platform ? ` on ${canary.platform}` : ' (no place given)'}
        </dd>
        <dt>Fired</dt>
        <dd data-testid="canary-fired">
          {canary.hit_count === 0 ? (
            'never'
          ) : (
            <>
              {canary.hit_count === 1 ? 'once' : `${canary.hit_count} times`}, last{' '}
              <Time iso={canary.last_hit_at} />
            </>
          )}
        </dd>
      </dl>
      {canary.artifact && (
        <p>
          <button
            type="button"
            onClick={() =>
              void downloading.run(() => download(canary.artifact!.url, canary.artifact!.filename))
            }
          >
            Download {canary.artifact.filename}
          </button>
        </p>
      )}
      <ErrorNote error={downloading.error} />
      <details>
        <summary>How to use it</summary>
        <p>{canary.how_to_use}</p>
      </details>

      <h2>Hits over time</h2>
      <RangeSelect range={range} onChange={setRange} />
      <HitsChart hits={hits} all={all} now={now} range={range} />

      <h2>Its threat events</h2>
      {events.length ? (
        <ul>
          {events.map((event) => (
            <li key={event.threat_event_id}>
              <a href={`#/threats/${encodeURIComponent(event.threat_event_id)}`}>
                {eventTitle(event)}
              </a>{' '}
              — <HitSpan event={event} />
            </li>
          ))}
        </ul>
      ) : (
        <p>
          It has not fired. Leave it where a thief would find it; when someone uses it, the event
          shows here and on <a href="#/threats">Threat events</a>.
        </p>
      )}
    </section>
  );
}
