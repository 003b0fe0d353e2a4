/** UTC calendar windows: their keys, and when the next one starts. */
export interface Window {
  key: string;
  resetsAt: Date;
}

const pad = (n: number) => String(n).padStart(2, '0');

export function monthWindow(now: Date): Window {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  return { key: `${y}-${pad(m + 1)}`, resetsAt: new Date(Date.UTC(y, m + 1, 1)) };
}

export function dayWindow(now: Date): Window {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  return { key: `${y}-${pad(m + 1)}-${pad(d)}`, resetsAt: new Date(Date.UTC(y, m, d + 1)) };
}

export function minuteWindow(now: Date): Window {
  const start = Math.floor(now.getTime() / 60_000) * 60_000;
  return { key: new Date(start).toISOString().slice(0, 16), resetsAt: new Date(start + 60_000) };
}

/** `YYYY-MM-DD`: how the spec's `resets_at` names a date. */
export function utcDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}
