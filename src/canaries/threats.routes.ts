import { z } from 'zod';
import { describeDelivery, deliveryView } from '../alerts/channels.routes';
import type { DeliveriesRepository } from '../alerts/deliveries.repository';
import { ALERT_LEVELS, attackerSchema, mailServerSchema } from '../alerts/payload';
import { evidenceRefView } from '../evidence/evidence.service';
import { callerAccountId } from '../auth/caller';
import type { Clock } from '../clock';
import { DomainError } from '../errors';
import { operationsFor } from '../http/operation';
import { cursorSchema, encodeCursor, limitSchema } from '../http/pagination';
import type { LiveFeed } from './live-feed';
import { streamLive, type LiveStreamSettings } from './live-stream';
import { CANARY_KINDS } from './kinds';
import {
  HIT_VIAS,
  type HitSource,
  type Page,
  type ThreatEvent,
  type ThreatHit,
  type ThreatsRepository,
} from './threats.repository';

/** A cursor names the last item of a page: its time and id. */
const cursor = cursorSchema(z.tuple([z.iso.datetime(), z.string()])).transform(([at, id]) => ({
  at: new Date(at),
  id,
}));

export const pageSchema = z
  .object({
    limit: limitSchema,
    canary_id: z.string().min(1).optional(),
    since: z.iso.datetime().optional(),
    until: z.iso.datetime().optional(),
    cursor: cursor.optional(),
  })
  .strict()
  .refine((q) => !q.since || !q.until || Date.parse(q.since) <= Date.parse(q.until), {
    path: ['until'],
    message: 'not before since',
  });

function pageOf(q: z.output<typeof pageSchema>): Page {
  return {
    limit: q.limit,
    canaryId: q.canary_id,
    since: q.since ? new Date(q.since) : undefined,
    until: q.until ? new Date(q.until) : undefined,
    after: q.cursor,
  };
}

function nextCursor<T extends { id: string }>(items: T[], limit: number, at: (item: T) => Date) {
  const last = items.at(-1);
  if (items.length < limit || !last) return null;
  return encodeCursor([at(last).toISOString(), last.id]);
}

/** Where a hit came from; `mail_server` only for a decoy email (then `ip` is empty). */
const hitSourceView = z.object({
  ip: z.string(),
  user_agent: z.string(),
  via: z.enum(HIT_VIAS),
  mail_server: z.object({ ip: z.string(), helo: z.string(), mail_from: z.string() }).nullable(),
  /** DNS canary only: the resolver that asked (then `ip` is empty), the name and record type. */
  resolver: z.object({ ip: z.string(), name: z.string(), type: z.string() }).nullable(),
});

/** One alert's worth of hits; also an agent's alert (`canary_kind: agent`). */
export const threatEventView = z
  .object({
    threat_event_id: z.string(),
    canary_id: z.string(),
    canary_kind: z.enum([...CANARY_KINDS, 'agent']),
    platform: z.string(),
    source: hitSourceView,
    first_hit_at: z.iso.datetime(),
    last_hit_at: z.iso.datetime(),
    hit_count: z.number().int(),
    /** Enrichment and risk, once the alert has been prepared. */
    alert: z
      .object({
        alert_level: z.enum(ALERT_LEVELS),
        risk_score: z.number().int(),
        risk_level: z.string(),
        interpretation: z.string(),
        /** The owner's memo from planting, so the card says which decoy leaked. */
        memo: z.string(),
        attacker: attackerSchema,
        mail_server: mailServerSchema.nullable(),
        resolver: mailServerSchema.nullable(),
        sent_at: z.iso.datetime(),
      })
      .nullable(),
  })
  .meta({ id: 'ThreatEvent' });
export const threatEventListView = z
  .object({ threat_events: z.array(threatEventView), next_cursor: z.string().nullable() })
  .meta({ id: 'ThreatEventPage' });

export const threatHitView = z
  .object({
    hit_id: z.string(),
    threat_event_id: z.string(),
    canary_id: z.string(),
    at: z.iso.datetime(),
    source: hitSourceView,
    request_id: z.string().nullable(),
    evidence: evidenceRefView.extend({ seq: z.number().int() }),
  })
  .meta({ id: 'ThreatHit' });
export const threatLogView = z
  .object({ hits: z.array(threatHitView), next_cursor: z.string().nullable() })
  .meta({ id: 'ThreatHitPage' });

function describeSource(source: HitSource): z.output<typeof hitSourceView> {
  return {
    ip: source.ip,
    user_agent: source.userAgent,
    via: source.via,
    mail_server: source.mailServer && {
      ip: source.mailServer.ip,
      helo: source.mailServer.helo,
      mail_from: source.mailServer.mailFrom,
    },
    resolver: source.resolver ?? null,
  };
}

function describeEvent(event: ThreatEvent): z.output<typeof threatEventView> {
  return {
    threat_event_id: event.id,
    canary_id: event.canaryId,
    canary_kind: event.canaryKind,
    platform: event.platform,
    source: describeSource(event.source),
    first_hit_at: event.firstHitAt.toISOString(),
    last_hit_at: event.lastHitAt.toISOString(),
    hit_count: event.hitCount,
    alert: event.alert && {
      alert_level: event.alert.data.alertLevel,
      risk_score: event.alert.data.riskScore,
      risk_level: event.alert.data.riskLevel,
      interpretation: event.alert.data.interpretation,
      memo: event.alert.data.memo ?? '',
      attacker: event.alert.data.attacker,
      mail_server: event.alert.data.mailServer ?? null,
      resolver: event.alert.data.resolver ?? null,
      sent_at: event.alert.sentAt,
    },
  };
}

function describeHit(hit: ThreatHit): z.output<typeof threatHitView> {
  return {
    hit_id: hit.id,
    threat_event_id: hit.threatEventId,
    canary_id: hit.canaryId,
    at: hit.at.toISOString(),
    source: describeSource(hit.source),
    request_id: hit.requestId,
    evidence: {
      log_id: hit.evidence.logId,
      seq: hit.evidence.seq,
      content_hash: hit.evidence.contentHash,
    },
  };
}

/** Every channel's deliveries for one event: what the event page shows under "Who was told". */
export const threatDeliveriesView = z
  .object({
    deliveries: z.array(
      deliveryView.extend({
        /** The channel's id; `builtin:email` and `builtin:chat` for the built-in channels. */
        channelId: z.string(),
      }),
    ),
  })
  .meta({ id: 'ThreatEventDeliveries' });

/** The storms still open: hits from their source on their canary still join their event. */
export const openStormsView = z
  .object({
    storms: z.array(
      threatEventView.extend({
        /** When the storm closes: a later hit from that source opens a new event and alert. */
        closes_at: z.iso.datetime(),
      }),
    ),
  })
  .meta({ id: 'OpenStorms' });

export interface ThreatRoutesDeps {
  threats: ThreatsRepository;
  deliveries: DeliveriesRepository;
  /** `STORM_WINDOW_SECONDS`, in ms: a storm closes this long after its first hit. */
  stormWindowMs: number;
  clock: Clock;
  feed: LiveFeed;
  stream: LiveStreamSettings;
}

const operation = operationsFor<ThreatRoutesDeps>('Threats');

/**
 * `/api/threat-events`: one entry per alert (a storm of hits counts as one); `/api/threat-log`:
 * every hit, each sealed in an evidence record (shared by a storm's hits from one source). Newest
 * first, `?limit&canary_id&since&until&cursor`.
 */
export const threatOperations = [
  operation({
    operationId: 'listThreatEvents',
    method: 'get',
    path: '/api/threat-events',
    summary: 'Threat events (one per alert)',
    description: 'One entry per alert (a storm of hits counts as one), newest first.',
    auth: 'sessionOrApiKey',
    query: pageSchema,
    success: { status: 200, description: '`{threat_events, next_cursor}`' },
    response: threatEventListView,
    handler: async ({ query, res }, { threats }) => {
      const page = pageOf(query);
      const events = await threats.listEvents(callerAccountId(res), page);
      return {
        threat_events: events.map(describeEvent),
        next_cursor: nextCursor(events, page.limit, (e) => e.firstHitAt),
      };
    },
  }),
  // These two before `{threat_event_id}`, which would match their last segment too.
  operation({
    operationId: 'streamThreatActivity',
    method: 'get',
    path: '/api/threat-events/stream',
    summary: 'New hits and alerts as they are recorded (server-sent events)',
    description:
      "A `text/event-stream` of the caller's threat activity, whichever API process recorded it: `event: hit` with `data: {hit_id, threat_event_id, canary_id, at}` for each new hit, `event: alert` with `data: {threat_event_id, canary_id, risk_level, alert_level}` once an event's alert is prepared (enrichment and risk), each with an `id`; a `: keep-alive` comment every 15 s; the end after 5 minutes (reconnect: credentials are checked again). Reconnecting with `Last-Event-ID` sends what was recorded since, from 5 s before it (an item may come twice), or `event: reset` when that is older than the process remembers (5 minutes): then re-read the lists.",
    auth: 'sessionOrApiKey',
    success: { status: 200, description: 'The event stream', contentType: 'text/event-stream' },
    handler: ({ req, res }, { feed, stream }) => {
      streamLive(req, res, callerAccountId(res), feed, stream);
    },
  }),
  operation({
    operationId: 'listOpenStorms',
    method: 'get',
    path: '/api/threat-events/open-storms',
    summary: 'Storms still open',
    description:
      'The threat events whose storm is still open (newest first, at most 200): further hits from the same source on the same canary join them until `closes_at` (`STORM_WINDOW_SECONDS` after the first hit). Agent alerts have no storm.',
    auth: 'sessionOrApiKey',
    success: { status: 200, description: '`{storms}`' },
    response: openStormsView,
    handler: async ({ res }, { threats, stormWindowMs, clock }) => {
      const now = clock().getTime();
      // A storm's window starts at its event's first hit (tripwires.ts claims it so).
      const events = await threats.listEvents(callerAccountId(res), {
        since: new Date(now - stormWindowMs + 1),
        limit: 200,
      });
      return {
        storms: events
          .filter((e) => e.canaryKind !== 'agent')
          .map((e) => ({
            ...describeEvent(e),
            closes_at: new Date(e.firstHitAt.getTime() + stormWindowMs).toISOString(),
          })),
      };
    },
  }),
  operation({
    operationId: 'getThreatEvent',
    method: 'get',
    path: '/api/threat-events/{threat_event_id}',
    summary: 'One threat event',
    description: "One alert's worth of hits, with its enrichment and risk once prepared.",
    auth: 'sessionOrApiKey',
    success: { status: 200, description: 'The threat event' },
    response: threatEventView,
    handler: async ({ params, res }, { threats }) => {
      const id = params.threat_event_id!;
      const event = await threats.findEvent(id);
      if (!event) throw new DomainError('not_found', `No threat event ${id}`);
      if (event.accountId !== callerAccountId(res))
        throw new DomainError('forbidden', `Threat event ${id} belongs to another account`);
      return describeEvent(event);
    },
  }),
  operation({
    operationId: 'listThreatEventDeliveries',
    method: 'get',
    path: '/api/threat-events/{threat_event_id}/deliveries',
    summary: "One threat event's deliveries, to every channel",
    description:
      "Every delivery made for the event (the first one to each channel and any resends), oldest first, with every attempt. Another account's event answers 404 like an unknown one.",
    auth: 'sessionOrApiKey',
    success: { status: 200, description: '`{deliveries}`' },
    response: threatDeliveriesView,
    handler: async ({ params, res }, { threats, deliveries }) => {
      const id = params.threat_event_id!;
      const accountId = callerAccountId(res);
      const event = await threats.findEvent(id);
      // Not 403: whether an event id exists in another account is not the caller's to learn.
      if (event?.accountId !== accountId)
        throw new DomainError('not_found', `No threat event ${id}`);
      const records = await deliveries.listForThreatEvent(accountId, id);
      return {
        deliveries: records.map((r) => ({ ...describeDelivery(r), channelId: r.channelId })),
      };
    },
  }),
  operation({
    operationId: 'listThreatHits',
    method: 'get',
    path: '/api/threat-log',
    summary: 'Every hit, each sealed',
    description:
      "Every hit, each sealed in an evidence record (a storm's hits from one source share one), newest first.",
    auth: 'sessionOrApiKey',
    query: pageSchema,
    success: { status: 200, description: '`{hits, next_cursor}`' },
    response: threatLogView,
    handler: async ({ query, res }, { threats }) => {
      const page = pageOf(query);
      const hits = await threats.listHits(callerAccountId(res), page);
      return {
        hits: hits.map(describeHit),
        next_cursor: nextCursor(hits, page.limit, (h) => h.at),
      };
    },
  }),
];
