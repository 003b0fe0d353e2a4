import { useState } from 'preact/hooks';
import { api } from '../api';
import { FALLBACK_POLL_MS, useLiveThreats } from '../live';
import type { ThreatEvent, ThreatEventPage } from '../types';
import { ErrorNote, Time, usePages } from '../ui';
import { Overview } from './overview';

/** Threat events, newest first: who used which canary, from where, and how risky it looks. */
export function ThreatsView() {
  const list = usePages(
    (cursor) =>
      api<ThreatEventPage>(
        'GET',
        `/api/threat-events?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ),
    (page) => page.threat_events,
    (page) => page.next_cursor,
  );
  const { items: events, more } = list;
  const [tick, setTick] = useState(0);
  // New hits appear without a reload, unless the reader has paged back into older events.
  const browsingOlder = list.pages > 1;
  const live = useLiveThreats(() => {
    setTick((n) => n + 1);
    void list.reload();
  }, !browsingOlder);
  return (
    <section aria-labelledby="threats-title">
      <h1 id="threats-title">Threat events</h1>
      <Overview tick={tick} />
      <h2>Events</h2>
      <p class="muted" data-testid="live-status">
        {browsingOlder
          ? 'Showing older events: new hits are not added while you read them.'
          : live
            ? 'Live: new hits show here as they are recorded.'
            : `Connecting to the live feed; meanwhile new hits show here within ${FALLBACK_POLL_MS / 1000} seconds.`}
      </p>
      <ErrorNote error={list.error} />
      {list.loaded && !events.length && (
        <p>
          No canary has fired yet. Plant one under <a href="#/canaries">Canaries</a> where a thief
          would find it; its hits show here.
        </p>
      )}
      <ul class="cards">
        {events.map((event) => (
          <ThreatCard key={event.threat_event_id} event={event} />
        ))}
      </ul>
      {more && (
        <button type="button" class="secondary" onClick={() => void more()} disabled={list.pending}>
          Load older events
        </button>
      )}
    </section>
  );
}

/**
 * What fired and how often, in words. An event is written a moment before its first hits are
 * sealed (and its alert may be prepared in between), so it can be read with none counted yet.
 */
export function eventTitle(event: ThreatEvent): string {
  const what = event.canary_kind === 'agent' ? 'agent alert' : `${event.canary_kind} canary fired`;
  if (!event.hit_count) return `${what}; its hits are being recorded`;
  return `${what} ${event.hit_count === 1 ? 'once' : `${event.hit_count} times`}`;
}

/** The event's first hit, and its last when there were more. */
export function HitSpan({ event }: { event: ThreatEvent }) {
  return (
    <>
      <Time iso={event.first_hit_at} />
      {event.last_hit_at !== event.first_hit_at && (
        <>
          {' '}
          to <Time iso={event.last_hit_at} />
        </>
      )}
    </>
  );
}

type Attacker = NonNullable<ThreatEvent['alert']>['attacker'];

/** Where an address is, as far as enrichment knows: city, country, network, kind. */
export function placeOf(who: Attacker): string {
  return [who.city, who.country, who.org, who.type].filter(Boolean).join(', ');
}

function ThreatCard({ event }: { event: ThreatEvent }) {
  const { alert } = event;
  const who = alert?.attacker;
  return (
    <li class="card" data-testid="threat-event">
      <h3>
        <a href={`#/threats/${encodeURIComponent(event.threat_event_id)}`}>{eventTitle(event)}</a>{' '}
        {alert && <span class={`badge risk-${alert.risk_level}`}>{alert.risk_level} risk</span>}
      </h3>
      <dl class="facts">
        <dt>When</dt>
        <dd>
          <HitSpan event={event} />
        </dd>
        {alert?.memo && (
          <>
            <dt>Memo</dt>
            <dd>{alert.memo}</dd>
          </>
        )}
        <dt>Used from</dt>
        <dd>{event.platform}</dd>
        <dt>How</dt>
        <dd>{event.source.via}</dd>
        <dt>From</dt>
        <dd>
          {event.source.ip || 'no address (relayed)'}
          {who && ` (${placeOf(who)})`}
        </dd>
        {alert && (
          <>
            <dt>Risk</dt>
            <dd>
              {alert.risk_score}/100, alert level {alert.alert_level}
              {who?.abuseScore != null && `, abuse score ${who.abuseScore}`}
            </dd>
            <dt>Interpretation</dt>
            <dd>{alert.interpretation}</dd>
          </>
        )}
        {alert?.resolver && (
          <>
            <dt>DNS resolver (not the attacker)</dt>
            <dd>
              {alert.resolver.ip} {alert.resolver.org}
            </dd>
          </>
        )}
        {alert?.mail_server && (
          <>
            <dt>Mail server</dt>
            <dd>
              {alert.mail_server.ip} {alert.mail_server.org}
            </dd>
          </>
        )}
      </dl>
      {!alert && <p class="muted">Enrichment and risk follow once the alert is prepared.</p>}
    </li>
  );
}
