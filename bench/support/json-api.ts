/**
 * A caller of the API a benchmark started: JSON in and out, and any 4xx or 5xx thrown with its
 * body, so a bench never counts a refused request as done.
 */
export function jsonApi(base: string) {
  return async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${base}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', ...init.headers },
    });
    if (res.status >= 400) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
}
