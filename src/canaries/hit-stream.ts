import type { Request, Response } from 'express';
import { eventIdOf, type HitFeed } from './hit-feed';
import type { RecordedHit } from './threats.repository';

export interface HitStreamSettings {
  /** A comment line this often, so proxies and the client see the connection alive. */
  heartbeatMs: number;
  /**
   * A stream ends after this long and the client reconnects (with `Last-Event-ID`): its
   * credentials are checked again then, so a revoked key or ended session stops listening.
   */
  maxMs: number;
}

export const DEFAULT_HIT_STREAM_SETTINGS: HitStreamSettings = {
  heartbeatMs: 15_000,
  maxMs: 5 * 60_000,
};

const hitEvent = (hit: RecordedHit) =>
  `id: ${eventIdOf(hit)}\nevent: hit\ndata: ${JSON.stringify({
    hit_id: hit.id,
    threat_event_id: hit.threatEventId,
    canary_id: hit.canaryId,
    at: hit.at.toISOString(),
  })}\n\n`;

/**
 * Server-sent events: `hit` for each new hit of the account; `reset` when a reconnect's
 * `Last-Event-ID` is older than this process remembers (re-read the lists instead).
 */
export function streamHits(
  req: Request,
  res: Response,
  accountId: string,
  feed: HitFeed,
  settings: HitStreamSettings,
): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    // A buffering proxy (nginx) would hold the events back.
    'x-accel-buffering': 'no',
  });
  res.write('retry: 3000\n\n');
  const last = req.header('last-event-id');
  if (last) {
    const missed = feed.since(accountId, last);
    res.write(missed ? missed.map(hitEvent).join('') : 'event: reset\ndata: {}\n\n');
  }
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), settings.heartbeatMs);
  const end = () => {
    clearInterval(heartbeat);
    clearTimeout(limit);
    unsubscribe();
    res.end();
  };
  const limit = setTimeout(end, settings.maxMs);
  const unsubscribe = feed.subscribe(accountId, (hit) => res.write(hitEvent(hit)), end);
  req.on('close', end);
}
