import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import type {
  CanaryList,
  Dashboard,
  OpenStorms,
  ThreatEventPage,
  ThreatHit,
  ThreatHitPage,
} from '../types';
import { ErrorNote, Field, Time, useLoad } from '../ui';
import { eventTitle } from './threats';
import { COUNTRY_POINTS, LAND } from '../world';

const HOUR = 3_600_000;
/** The chart's ranges: how far back, and how wide each bar is. */
export const RANGES = {
  '24h': { label: 'Last 24 hours', span: 24 * HOUR, bar: HOUR, days: 1 },
  '7d': { label: 'Last 7 days', span: 7 * 24 * HOUR, bar: 6 * HOUR, days: 7 },
  '30d': { label: 'Last 30 days', span: 30 * 24 * HOUR, bar: 24 * HOUR, days: 30 },
} as const;
export type Range = keyof typeof RANGES;
/** At most this many hits are read for the chart (5 pages of the log). */
const MAX_PAGES = 5;

/** The hits since then (on one canary, or all), newest first; `all` false when capped. */
export async function hitsSince(
  since: Date,
  canaryId?: string,
): Promise<{ hits: ThreatHit[]; all: boolean }> {
  const hits: ThreatHit[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer: ThreatHitPage = await api<ThreatHitPage>(
      'GET',
      `/api/threat-log?limit=200&since=${encodeURIComponent(since.toISOString())}` +
        (canaryId ? `&canary_id=${encodeURIComponent(canaryId)}` : '') +
        (cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''),
    );
    hits.push(...answer.hits);
    cursor = answer.next_cursor;
    if (!cursor) return { hits, all: true };
  }
  return { hits, all: false };
}

/** Hits over time and the most-fired canaries, re-read whenever `tick` changes. */
export function Overview({ tick }: { tick: number }) {
  const [range, setRange] = useState<Range>('24h');
  const { span } = RANGES[range];
  const data = useLoad(async () => {
    const now = Date.now();
    const since = encodeURIComponent(new Date(now - span).toISOString());
    const [read, { canaries }, { threat_events: events }] = await Promise.all([
      hitsSince(new Date(now - span)),
      api<CanaryList>('GET', '/api/canaries'),
      api<ThreatEventPage>('GET', `/api/threat-events?limit=200&since=${since}`),
    ]);
    return { now, ...read, canaries, events };
  }, [range, tick]);
  if (data.error) return <ErrorNote error={data.error} />;
  if (!data.data) return <p>Loading…</p>;
  const { now, hits, all, canaries, events } = data.data;
  const perCountry = new Map<string, number>();
  for (const event of events) {
    const country = event.alert?.attacker.country;
    if (country && COUNTRY_POINTS[country])
      perCountry.set(country, (perCountry.get(country) ?? 0) + event.hit_count);
  }

  const perCanary = new Map<string, number>();
  for (const hit of hits) perCanary.set(hit.canary_id, (perCanary.get(hit.canary_id) ?? 0) + 1);
  const mostFired = [...perCanary].sort((a, b) => b[1] - a[1]).slice(0, 5);
  const named = new Map(canaries.map((c) => [c.canary_id, c]));

  return (
    <section aria-labelledby="overview-title" class="overview">
      <h2 id="overview-title">Overview</h2>
      <RangeSelect range={range} onChange={setRange} />
      <HitsChart hits={hits} all={all} now={now} range={range} />
      <h3>Where the hits came from</h3>
      <svg
        viewBox="0 0 720 360"
        class="map"
        role="img"
        aria-label={
          perCountry.size
            ? `World map of hits: ${[...perCountry].map(([c, n]) => `${c} ${n}`).join(', ')}`
            : 'World map: no hit with a known place in this range'
        }
        data-testid="hits-map"
      >
        <path d={LAND} class="land" />
        {[...perCountry].map(([country, count]) => {
          const [lon, lat] = COUNTRY_POINTS[country]!;
          return (
            <circle
              key={country}
              data-country={country}
              cx={(lon + 180) * 2}
              cy={(90 - lat) * 2}
              r={4 + Math.min(10, Math.sqrt(count) * 2)}
            >
              <title>{`${country}: ${count} hit${count === 1 ? '' : 's'}`}</title>
            </circle>
          );
        })}
      </svg>
      <Figures days={RANGES[range].days} tick={tick} />
      <OpenStormsPanel tick={tick} />
      <h3>Most-fired canaries</h3>
      {mostFired.length ? (
        <ol data-testid="most-fired">
          {mostFired.map(([id, count]) => {
            const canary = named.get(id);
            return (
              <li key={id}>
                {canary ? `${canary.kind}${canary.memo ? ` “${canary.memo}”` : ''}` : id}: {count}{' '}
                hit{count === 1 ? '' : 's'}
              </li>
            );
          })}
        </ol>
      ) : (
        <p>No canary fired in this range.</p>
      )}
    </section>
  );
}

/** Hits as bars over the range, newest on the right, with the total underneath. */
export function HitsChart({
  hits,
  all,
  now,
  range,
}: {
  hits: ThreatHit[];
  all: boolean;
  now: number;
  range: Range;
}) {
  const { span, bar, label } = RANGES[range];
  const bars = Math.round(span / bar);
  const counts = new Array<number>(bars).fill(0);
  for (const hit of hits) {
    const index = bars - 1 - Math.floor((now - Date.parse(hit.at)) / bar);
    if (index >= 0 && index < bars) counts[index]!++;
  }
  const top = Math.max(1, ...counts);
  const total = `${hits.length}${all ? '' : '+'} hit${hits.length === 1 ? '' : 's'}`;
  return (
    <figure>
      <svg
        viewBox={`0 0 ${bars * 10} 60`}
        class="chart"
        preserveAspectRatio="none"
        role="img"
        aria-label={`Hits over time: ${total} in the ${label.toLowerCase()}`}
        data-testid="hits-chart"
      >
        {counts.map((count, i) => (
          <rect
            key={i}
            x={i * 10 + 1}
            width={8}
            y={60 - (count / top) * 58}
            height={(count / top) * 58}
            data-count={count}
          >
            <title>{`${count} hit${count === 1 ? '' : 's'}, ${new Date(now - (bars - i) * bar).toLocaleString()} onwards`}</title>
          </rect>
        ))}
      </svg>
      <figcaption data-testid="hits-total">
        {total}, {label.toLowerCase()}
      </figcaption>
    </figure>
  );
}

export function RangeSelect({ range, onChange }: { range: Range; onChange: (r: Range) => void }) {
  return (
    <Field label="Range">
      <select value={range} onChange={(e) => onChange(e.currentTarget.value as Range)}>
        {Object.entries(RANGES).map(([value, { label }]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </Field>
  );
}

/**
 * Canaries being hit right now: each storm gathers one source's hits on one canary into one
 * event until its window closes. Re-read on every change, and when the first one closes.
 */
function OpenStormsPanel({ tick }: { tick: number }) {
  const [closed, setClosed] = useState(0);
  const open = useLoad(
    () => api<OpenStorms>('GET', '/api/threat-events/open-storms'),
    [tick, closed],
  );
  const storms = open.data?.storms ?? [];
  const next = Math.min(...storms.map((s) => Date.parse(s.closes_at)));
  useEffect(() => {
    if (!Number.isFinite(next)) return;
    const timer = setTimeout(() => setClosed((n) => n + 1), Math.max(0, next - Date.now()) + 500);
    return () => clearTimeout(timer);
  }, [next]);
  return (
    <>
      <h3>Open storms</h3>
      <ErrorNote error={open.error} />
      {storms.length ? (
        <ul data-testid="open-storms">
          {storms.map((storm) => (
            <li key={storm.threat_event_id}>
              <a href={`#/threats/${encodeURIComponent(storm.threat_event_id)}`}>
                {eventTitle(storm)}
              </a>
              {storm.alert?.memo && ` “${storm.alert.memo}”`} from {storm.source.ip || 'a relay'};
              further hits join it until <Time iso={storm.closes_at} />
            </li>
          ))}
        </ul>
      ) : (
        open.data && (
          <p data-testid="open-storms">
            None right now. A storm opens when a canary fires: the hits from that source in the next
            moments join its one alert.
          </p>
        )
      )}
    </>
  );
}

const counted = (rows: { key: string; count: number }[], none: string) =>
  rows.length ? rows.map((r) => `${r.key} ${r.count}`).join(', ') : none;

/** The dashboard's figures over whole UTC days (`/api/dashboard`): levels, deliveries, channels. */
function Figures({ days, tick }: { days: number; tick: number }) {
  const figures = useLoad(() => api<Dashboard>('GET', `/api/dashboard?days=${days}`), [days, tick]);
  if (figures.error) return <ErrorNote error={figures.error} />;
  if (!figures.data) return null;
  const { events_by_level, deliveries_by_outcome, channel_health, since } = figures.data;
  const failing = channel_health.filter((c) => !c.disabled && !c.healthy);
  return (
    <>
      <h3>In figures</h3>
      <dl class="facts" data-testid="figures">
        <dt>Since</dt>
        <dd>
          <Time iso={since} /> (whole UTC days)
        </dd>
        <dt>Threat events by alert level</dt>
        <dd>{counted(events_by_level, 'none')}</dd>
        <dt>Deliveries</dt>
        <dd>{counted(deliveries_by_outcome, 'none')}</dd>
        <dt>Channels</dt>
        <dd>
          {channel_health.length - failing.length} of {channel_health.length} healthy
          {failing.length > 0 && (
            <>
              ; failing: {failing.map((c) => c.name).join(', ')} (see{' '}
              <a href="#/channels">Alert channels</a>)
            </>
          )}
        </dd>
      </dl>
    </>
  );
}
