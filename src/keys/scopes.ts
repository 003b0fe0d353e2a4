/**
 * API key scopes: normalisation at key creation and the gate that maps a request to the scope it
 * needs (the spec's scope table, first matching prefix wins).
 */

export const MAX_SCOPES = 20;
export const ALL_SCOPES = '*';

/** `*`, `<namespace>:*`, `<name>` or `<namespace>:<action>`, names in [a-z0-9_.-]. */
const SCOPE_SHAPE = /^(?:\*|[a-z0-9_.-]+(?::(?:[a-z0-9_.-]+|\*))?)$/;

/** Lower-case, drop what is outside the allowed set, de-duplicate in order; nothing left → `*`. */
export function normaliseScopes(scopes: readonly string[] | undefined): string[] {
  const kept = new Set<string>();
  for (const scope of scopes ?? []) {
    const lowered = scope.trim().toLowerCase();
    if (SCOPE_SHAPE.test(lowered)) kept.add(lowered);
  }
  return kept.size ? [...kept] : [ALL_SCOPES];
}

interface ScopeRule {
  prefix: string;
  read: string;
  write: string;
}

/** The spec's table, in its order. */
export const SCOPE_TABLE: readonly ScopeRule[] = [
  { prefix: '/api/admin', read: 'admin:*', write: 'admin:*' },
  { prefix: '/api/audit', read: 'profile:read', write: 'profile:write' },
  { prefix: '/api/payments', read: 'payments:read', write: 'payments:write' },
  { prefix: '/api/privacy', read: 'privacy:read', write: 'privacy:write' },
  { prefix: '/api/threat-events', read: 'threats:read', write: 'threats:read' },
  { prefix: '/api/threat-log', read: 'threats:read', write: 'threats:read' },
  { prefix: '/api/canaries', read: 'canaries:read', write: 'canaries:read' },
  { prefix: '/api/community', read: 'community:read', write: 'community:read' },
  { prefix: '/api/breaches', read: 'breaches:read', write: 'breaches:write' },
  { prefix: '/api/dashboard', read: 'dashboard:read', write: 'dashboard:read' },
  { prefix: '/api/referral', read: 'referral:read', write: 'referral:write' },
  { prefix: '/api/settings', read: 'settings:read', write: 'settings:write' },
  { prefix: '/api/workflow-runs', read: 'threats:read', write: 'threats:read' },
  { prefix: '/api/weekly', read: 'threats:read', write: 'threats:read' },
  { prefix: '/api/users', read: 'profile:read', write: 'profile:write' },
  { prefix: '/api/emails', read: 'profile:read', write: 'profile:write' },
  { prefix: '/api/onboard', read: 'profile:write', write: 'profile:write' },
  { prefix: '/agent', read: 'agent:read', write: 'agent:write' },
  { prefix: '/audit', read: 'audit:read', write: 'audit:write' },
  { prefix: '/shield', read: 'shield:read', write: 'shield:write' },
  { prefix: '/honeypot', read: 'honeypot:read', write: 'honeypot:write' },
  { prefix: '/rag', read: 'rag:read', write: 'rag:write' },
];

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Prefixes match whole path segments: `/shield` covers `/shield/x`, not `/shieldx`. */
function underPrefix(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * The scope a request needs, or undefined when no prefix of the table covers its path. Lower-cased
 * first, because Express routes `/SHIELD/inspect` to the `/shield` handlers.
 */
export function requiredScope(method: string, path: string): string | undefined {
  const lowered = path.toLowerCase();
  const rule = SCOPE_TABLE.find((r) => underPrefix(lowered, r.prefix));
  if (!rule) return undefined;
  return WRITE_METHODS.has(method.toUpperCase()) ? rule.write : rule.read;
}

function namespaceOf(scope: string): string {
  const colon = scope.indexOf(':');
  return colon === -1 ? scope : scope.slice(0, colon);
}

/** `*` grants everything; `<ns>:*` grants every scope of that namespace; otherwise exact match. */
export function scopesGrant(granted: readonly string[], required: string): boolean {
  return granted.some(
    (scope) =>
      scope === ALL_SCOPES ||
      scope === required ||
      (scope.endsWith(':*') && namespaceOf(scope) === namespaceOf(required)),
  );
}
