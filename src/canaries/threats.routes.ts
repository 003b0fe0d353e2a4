import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { ALERT_LEVELS, attackerSchema, mailServerSchema } from '../alerts/payload';
import { evidenceRefView } from '../evidence/evidence.service';
import { callerAccountId } from '../http/caller';
import { CANARY_KINDS } from './decoys';
import {
  HIT_VIAS,
  type HitSource,
  type Page,
  type ThreatEvent,
  type ThreatHit,
  type ThreatsRepository,
} from './threats.repository';
import { parseQuery } from '../http/validate';

/** A cursor names the last item of a page: its time and id, opaque to clients. */
const cursor = z.string().transform((value, ctx) => {
  try {
    const [at, id] = JSON.parse(Buffer.from(value, 'base64url').toString()) as [string, string];
    const date = new Date(at);
    if (typeof id === 'string' && !Number.isNaN(date.getTime())) return { at: date, id };
  } catch {
    // reported below
  }
  ctx.addIssue({ code: 'custom', message: 'not a cursor from a previous page' });
  return z.NEVER;
});

export const pageSchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(200).default(50),
    canary_id: z.string().min(1).optional(),
    since: z.iso.datetime().optional(),
    until: z.iso.datetime().optional(),
    cursor: cursor.optional(),
  })
  .strict()
  .refine((q) => !(q.since && q.until && Date.parse(q.since) > Date.parse(q.until)), {
    path: ['since'],
    message: 'after query.until: the range [since, until) would be empty',
  });

function pageOf(query: unknown): Page {
  const q = parseQuery(pageSchema, query);
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
  return Buffer.from(JSON.stringify([at(last).toISOString(), last.id])).toString('base64url');
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
export const threatEventView = z.object({
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
});
export const threatEventListView = z.object({
  threat_events: z.array(threatEventView),
  next_cursor: z.string().nullable(),
});

export const threatHitView = z.object({
  hit_id: z.string(),
  threat_event_id: z.string(),
  canary_id: z.string(),
  at: z.iso.datetime(),
  source: hitSourceView,
  request_id: z.string().nullable(),
  evidence: evidenceRefView.extend({ seq: z.number().int() }),
});
export const threatLogView = z.object({
  hits: z.array(threatHitView),
  next_cursor: z.string().nullable(),
});

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

/**
 * `/api/threat-events`: one entry per alert (a storm of hits counts as one); `/api/threat-log`:
 * every hit, each a sealed evidence record. Newest first, `?limit&canary_id&since&until&cursor`.
 */
export function threatRoutes(threats: ThreatsRepository, authenticate: RequestHandler): Router {
  const router = Router();

  router.get('/threat-events', authenticate, async (req, res) => {
    const page = pageOf(req.query);
    const events = await threats.listEvents(callerAccountId(res), page);
    res.json({
      threat_events: events.map(describeEvent),
      next_cursor: nextCursor(events, page.limit, (e) => e.firstHitAt),
    } satisfies z.output<typeof threatEventListView>);
  });

  router.get('/threat-log', authenticate, async (req, res) => {
    const page = pageOf(req.query);
    const hits = await threats.listHits(callerAccountId(res), page);
    res.json({
      hits: hits.map(describeHit),
      next_cursor: nextCursor(hits, page.limit, (h) => h.at),
    } satisfies z.output<typeof threatLogView>);
  });

  return router;
}
