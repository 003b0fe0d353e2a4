import type { Request, Response } from 'express';
import { eventIdOf, type LiveFeed } from './live-feed';
import type { LiveItem } from './threats.repository';

export interface LiveStreamSettings {
  /** A comment line this often, so proxies and the client see the connection alive. */
  heartbeatMs: number;
  /**
   * A stream ends after this long and the client reconnects (with `Last-Event-ID`): its
   * credentials are checked again then, so a revoked key or ended session stops listening.
   */
  maxMs: number;
}

export const DEFAULT_LIVE_STREAM_SETTINGS: LiveStreamSettings = {
  heartbeatMs: 15_000,
  maxMs: 5 * 60_000,
};

const asEvent = (item: LiveItem) =>
  `id: ${eventIdOf(item)}\nevent: ${item.type}\ndata: ${JSON.stringify(item.data)}\n\n`;

/**
 * Server-sent events: `hit` for each new hit of the account, `alert` when an event's alert is
 * prepared; `reset` when a reconnect's `Last-Event-ID` is older than this process remembers
 * (re-read the lists instead).
 */
export function streamLive(
  req: Request,
  res: Response,
  accountId: string,
  feed: LiveFeed,
  settings: LiveStreamSettings,
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
    res.write(missed ? missed.map(asEvent).join('') : 'event: reset\ndata: {}\n\n');
  }
  const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), settings.heartbeatMs);
  const end = () => {
    clearInterval(heartbeat);
    clearTimeout(limit);
    unsubscribe();
    res.end();
  };
  const limit = setTimeout(end, settings.maxMs);
  const unsubscribe = feed.subscribe(accountId, (item) => res.write(asEvent(item)), end);
  req.on('close', end);
}
