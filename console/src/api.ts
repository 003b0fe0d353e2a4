import { EventSource } from 'eventsource';
import type { Session } from './types';

/** An API answer other than 2xx, with the service's `detail` turned into one readable line. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
  ) {
    super(describeDetail(status, detail));
  }
}

function describeDetail(status: number, detail: unknown): string {
  if (typeof detail === 'string') return detail;
  if (detail && typeof detail === 'object') {
    const { message, error } = detail as { message?: unknown; error?: unknown };
    if (typeof message === 'string') return message;
    if (typeof error === 'string') return error.replace(/_/g, ' ');
  }
  return `The service answered ${status}`;
}

/**
 * The session token lives only in this module's memory; the HttpOnly refresh cookie (path
 * /api/auth) is its durable half, so a reload signs back in through `resume()`.
 */
let session: Session | null = null;
let refreshing: Promise<Session | null> | null = null;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let onSignedOut: () => void = () => {};

export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

function keep(next: Session | null): Session | null {
  session = next;
  clearTimeout(refreshTimer);
  if (next) {
    // Renew a minute before the token expires, so an open console never meets a 401.
    const due = Date.parse(next.expires_at) - Date.now() - 60_000;
    refreshTimer = setTimeout(() => void refresh(), Math.max(due, 5_000));
  }
  return next;
}

async function send(method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (session) headers.authorization = `Bearer ${session.token}`;
  return fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
}

async function failure(res: Response): Promise<ApiError> {
  const body = (await res.json().catch(() => null)) as { detail?: unknown } | null;
  return new ApiError(res.status, body?.detail);
}

/** One refresh at a time: the cookie rotates, so a second concurrent refresh would fail. */
function refresh(): Promise<Session | null> {
  refreshing ??= (async () => {
    const res = await send('POST', '/api/auth/refresh');
    return keep(res.ok ? ((await res.json()) as Session) : null);
  })().finally(() => (refreshing = null));
  return refreshing;
}

/** A signed-in call; an expired token is renewed once through the cookie before giving up. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  let res = await send(method, path, body);
  if (res.status === 401 && session) {
    if (await refresh()) res = await send(method, path, body);
    else onSignedOut();
  }
  if (!res.ok) throw await failure(res);
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/** At start-up: the refresh cookie, if the browser still has one, signs the console back in. */
export const resume = (): Promise<Session | null> => refresh();

export async function login(email: string, password: string): Promise<Session> {
  const res = await send('POST', '/api/auth/login', { email, password });
  if (!res.ok) throw await failure(res);
  return keep((await res.json()) as Session)!;
}

export async function signup(email: string, password: string): Promise<Session> {
  const res = await send('POST', '/api/auth/signup', { email, password });
  if (!res.ok) throw await failure(res);
  return login(email, password);
}

export async function logout(): Promise<void> {
  await send('POST', '/api/auth/logout').catch(() => undefined);
  keep(null);
}

/** Downloads go through fetch, because the token is a header a plain link cannot carry. */
export async function download(path: string, filename: string): Promise<void> {
  const res = await send('GET', path);
  if (!res.ok) throw await failure(res);
  const url = URL.createObjectURL(await res.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * A server-sent event stream of the API, signed in: the `eventsource` client (the browser's own
 * cannot send the token, which lives in a header) with the current token on every (re)connect,
 * renewed once through the cookie when it was refused as expired.
 */
export function openStream(path: string): EventSource {
  return new EventSource(path, {
    fetch: async (url, init) => {
      const attempt = () =>
        fetch(url, {
          ...init,
          headers: {
            ...init.headers,
            ...(session && { authorization: `Bearer ${session.token}` }),
          },
        });
      const res = await attempt();
      return res.status === 401 && session && (await refresh()) ? attempt() : res;
    },
  });
}
