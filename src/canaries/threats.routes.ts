import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { callerAccountId } from '../http/caller';
import type {
  HitSource,
  Page,
  ThreatEvent,
  ThreatHit,
  ThreatsRepository,
} from './threats.repository';

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
  .strict();

function pageOf(query: unknown): Page {
  const q = pageSchema.parse(query);
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

function describeSource(source: HitSource) {
  return {
    ip: source.ip,
    user_agent: source.userAgent,
    via: source.via,
    mail_server: source.mailServer && {
      ip: source.mailServer.ip,
      helo: source.mailServer.helo,
      mail_from: source.mailServer.mailFrom,
    },
  };
}

function describeEvent(event: ThreatEvent) {
  return {
    threat_event_id: event.id,
    canary_id: event.canaryId,
    canary_kind: event.canaryKind,
    platform: event.platform,
    source: describeSource(event.source),
    first_hit_at: event.firstHitAt.toISOString(),
    last_hit_at: event.lastHitAt.toISOString(),
    hit_count: event.hitCount,
    /** Enrichment and risk, once the alert has been prepared. */
    alert: event.alert && {
      alert_level: event.alert.data.alertLevel,
      risk_score: event.alert.data.riskScore,
      risk_level: event.alert.data.riskLevel,
      interpretation: event.alert.data.interpretation,
      attacker: event.alert.data.attacker,
      mail_server: event.alert.data.mailServer ?? null,
      sent_at: event.alert.sentAt,
    },
  };
}

function describeHit(hit: ThreatHit) {
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
    });
  });

  router.get('/threat-log', authenticate, async (req, res) => {
    const page = pageOf(req.query);
    const hits = await threats.listHits(callerAccountId(res), page);
    res.json({
      hits: hits.map(describeHit),
      next_cursor: nextCursor(hits, page.limit, (h) => h.at),
    });
  });

  return router;
}
