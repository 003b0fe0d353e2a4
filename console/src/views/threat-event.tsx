import { api } from '../api';
import type { ChannelList, Delivery, ThreatDeliveries, ThreatEvent, ThreatHitPage } from '../types';
import { ErrorNote, Table, Time, useLoad } from '../ui';
import { DeliveryTable, deliveryState } from './channels';
import { ProofButton, VerifyButton } from './evidence';
import { eventTitle, HitSpan, placeOf } from './threats';

/** The built-in channels, which every account has and the channel list does not name. */
const BUILT_IN: Record<string, string> = { 'builtin:email': 'Email', 'builtin:chat': 'Telegram' };

interface ChannelDeliveries {
  id: string;
  name: string;
  path: string;
  deliveries: Delivery[];
}

/** One event's whole story: its hits, the alert, each channel's deliveries and the sealed records. */
async function loadStory(id: string) {
  const path = `/api/threat-events/${encodeURIComponent(id)}`;
  const [event, sent, { channels }] = await Promise.all([
    api<ThreatEvent>('GET', path),
    api<ThreatDeliveries>('GET', `${path}/deliveries`),
    api<ChannelList>('GET', '/api/alert-channels'),
  ]);
  // The hits in the event's time span on its canary (the log's `until` is exclusive).
  const until = new Date(Date.parse(event.last_hit_at) + 1).toISOString();
  const log = await api<ThreatHitPage>(
    'GET',
    `/api/threat-log?limit=200&canary_id=${encodeURIComponent(event.canary_id)}` +
      `&since=${encodeURIComponent(event.first_hit_at)}&until=${encodeURIComponent(until)}`,
  );
  const hits = log.hits.filter((h) => h.threat_event_id === id).reverse();
  const names = new Map(channels.map((c) => [c.id, c.name]));
  const byChannel = new Map<string, ChannelDeliveries>();
  for (const delivery of sent.deliveries) {
    const channelId = delivery.channelId;
    const channel = byChannel.get(channelId) ?? {
      id: channelId,
      // A deleted channel keeps its deliveries; its id stands in for its name.
      name: names.get(channelId) ?? BUILT_IN[channelId] ?? channelId,
      path: `/api/alert-channels/${encodeURIComponent(channelId)}/deliveries`,
      deliveries: [],
    };
    // Newest first, as a channel's own list shows them.
    channel.deliveries.unshift(delivery);
    byChannel.set(channelId, channel);
  }
  return { event, hits, deliveries: [...byChannel.values()] };
}

export function ThreatEventView({ id }: { id: string }) {
  const story = useLoad(() => loadStory(id), [id]);
  if (story.error)
    return (
      <section aria-labelledby="event-title">
        <h1 id="event-title">Threat event</h1>
        <ErrorNote error={story.error} />
        <a href="#/threats">Back to threat events</a>
      </section>
    );
  if (!story.data) return <p>Loading…</p>;
  const { event, hits, deliveries } = story.data;
  const { alert } = event;
  const told = deliveries.filter((c) => c.deliveries.length);
  return (
    <section aria-labelledby="event-title">
      <p>
        <a href="#/threats">← Threat events</a>
      </p>
      <h1 id="event-title">{eventTitle(event)}</h1>
      <dl class="facts">
        <dt>When</dt>
        <dd>
          <HitSpan event={event} />
        </dd>
        <dt>Used from</dt>
        <dd>{event.platform}</dd>
        <dt>Canary</dt>
        <dd>
          <code>{event.canary_id}</code>
          {alert?.memo && ` (${alert.memo})`}
        </dd>
      </dl>

      <h2>Hits</h2>
      {hits.length ? (
        <Table label="Hits">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Source</th>
              <th scope="col">How</th>
              <th scope="col">Client</th>
              <th scope="col">Sealed record</th>
            </tr>
          </thead>
          <tbody>
            {hits.map((hit) => (
              <tr key={hit.hit_id}>
                <td data-label="When">
                  <Time iso={hit.at} />
                </td>
                <td data-label="Source">
                  {hit.source.ip ||
                    (hit.source.resolver && `resolver ${hit.source.resolver.ip}`) ||
                    (hit.source.mail_server && `mail server ${hit.source.mail_server.ip}`) ||
                    'no address'}
                  {alert && hit.source.ip === event.source.ip && (
                    <div class="muted">{placeOf(alert.attacker)}</div>
                  )}
                </td>
                <td data-label="How">{hit.source.via}</td>
                <td data-label="Client">{hit.source.user_agent || '—'}</td>
                <td data-label="Sealed record">
                  #{hit.evidence.seq}{' '}
                  <VerifyButton logId={hit.evidence.log_id} seq={hit.evidence.seq} />{' '}
                  <ProofButton
                    logId={hit.evidence.log_id}
                    seq={hit.evidence.seq}
                    contentHash={hit.evidence.content_hash}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </Table>
      ) : (
        <p>The hits are still being sealed; reload in a moment.</p>
      )}

      <h2>Alert</h2>
      {alert ? (
        <dl class="facts" data-testid="alert">
          <dt>Risk</dt>
          <dd>
            <span class={`badge risk-${alert.risk_level}`}>{alert.risk_level} risk</span>{' '}
            {alert.risk_score}/100, alert level {alert.alert_level}
            {alert.attacker.abuseScore != null && `, abuse score ${alert.attacker.abuseScore}`}
          </dd>
          <dt>Sent</dt>
          <dd>
            <Time iso={alert.sent_at} />
          </dd>
          <dt>From</dt>
          <dd>{placeOf(alert.attacker) || 'unknown'}</dd>
          <dt>Interpretation</dt>
          <dd>{alert.interpretation}</dd>
        </dl>
      ) : (
        <p>The alert is being prepared (enrichment and risk); reload in a moment.</p>
      )}

      <h2>Who was told</h2>
      {told.length ? (
        <ul class="cards">
          {told.map((channel) => (
            <li
              key={channel.id}
              class="card"
              data-testid="channel-story"
              aria-labelledby={`story-${channel.id}`}
            >
              <h3 id={`story-${channel.id}`}>
                {channel.name}{' '}
                {channel.deliveries.map((d) => (
                  <span key={d.deliveryId} class={`badge state-${deliveryState(d)}`}>
                    {deliveryState(d)}
                  </span>
                ))}
              </h3>
              <DeliveryTable
                label={`Deliveries to ${channel.name}`}
                path={channel.path}
                deliveries={channel.deliveries}
                changed={story.reload}
              />
            </li>
          ))}
        </ul>
      ) : (
        <p>
          No channel has a delivery for this event yet.{' '}
          {alert ? (
            <>
              Add one under <a href="#/channels">Alert channels</a> so the next alert reaches you.
            </>
          ) : (
            'Deliveries follow the alert.'
          )}
        </p>
      )}
    </section>
  );
}
