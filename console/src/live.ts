import { useEffect, useRef, useState } from 'preact/hooks';
import { openStream } from './api';

/** While the stream is down: look for new hits this often instead. */
export const FALLBACK_POLL_MS = 5_000;
/** A burst of hits (a storm) is one re-read, not one per hit. */
const SETTLE_MS = 300;
/** After the stream was refused (not merely dropped): try it again this much later. */
const REOPEN_MS = 15_000;

/**
 * Calls `changed` when new hits or alerts are recorded (server-sent events from
 * `/api/threat-events/stream`), and every 5 s in a visible tab while the stream is down; false
 * while it is. The client reconnects by itself after a drop, sending the last event's id.
 */
export function useLiveThreats(changed: () => void, enabled = true): boolean {
  const [live, setLive] = useState(false);
  const latest = useRef(changed);
  latest.current = changed;
  useEffect(() => {
    if (!enabled) return;
    let settle: ReturnType<typeof setTimeout> | undefined;
    let reopen: ReturnType<typeof setTimeout> | undefined;
    const soon = () => {
      clearTimeout(settle);
      settle = setTimeout(() => latest.current(), SETTLE_MS);
    };
    const poll = setInterval(() => {
      if (!source || source.readyState !== source.OPEN) {
        if (document.visibilityState === 'visible') latest.current();
      }
    }, FALLBACK_POLL_MS);
    let source: ReturnType<typeof openStream> | undefined;
    let opened = false;
    const open = () => {
      source = openStream('/api/threat-events/stream');
      source.onopen = () => {
        // Back after a drop: what came meanwhile may not all be replayed, so re-read.
        if (opened) soon();
        opened = true;
        setLive(true);
      };
      source.addEventListener('hit', soon);
      // An event's enrichment and risk are ready.
      source.addEventListener('alert', soon);
      // The server no longer has what was missed: re-read everything.
      source.addEventListener('reset', soon);
      source.onerror = () => {
        setLive(false);
        if (source?.readyState === source?.CLOSED) reopen = setTimeout(open, REOPEN_MS);
      };
    };
    open();
    return () => {
      clearInterval(poll);
      clearTimeout(settle);
      clearTimeout(reopen);
      source?.close();
      setLive(false);
    };
  }, [enabled]);
  return live;
}
