import { normaliseScopes, requiredScope, scopesGrant } from '../../src/keys/scopes';

describe('normaliseScopes', () => {
  it.each([
    [undefined, ['*']],
    [[], ['*']],
    [['Shield:Write', 'shield:write', 'SHIELD:WRITE'], ['shield:write']],
    [['audit:read', 'bad scope', 'x/y', 'ü:read', ''], ['audit:read']],
    [['!!!', '  '], ['*']],
    [
      ['AUDIT:*', '*'],
      ['audit:*', '*'],
    ],
    [['a:b:c', ':read', 'ns:', '*:read', 'a*'], ['*']],
    [['rag_docs.v2-x:write'], ['rag_docs.v2-x:write']],
    [[' profile:read '], ['profile:read']],
  ])('when given %j, then it keeps %j', (input, expected) => {
    expect(normaliseScopes(input)).toEqual(expected);
  });
});

describe('requiredScope', () => {
  it.each([
    ['GET', '/shield/history', 'shield:read'],
    ['POST', '/shield/inspect', 'shield:write'],
    ['PUT', '/rag/docs/1', 'rag:write'],
    ['PATCH', '/honeypot', 'honeypot:write'],
    ['DELETE', '/agent/a1', 'agent:write'],
    ['HEAD', '/audit/export/u', 'audit:read'],
    ['OPTIONS', '/audit/export/u', 'audit:read'],
    ['POST', '/api/threat-events', 'threats:read'],
    ['GET', '/api/admin/plans', 'admin:*'],
    ['POST', '/api/onboard', 'profile:write'],
    ['GET', '/api/onboard', 'profile:write'],
    ['GET', '/SHIELD/Inspect', 'shield:read'],
    ['post', '/shield/inspect', 'shield:write'],
  ])('when %s %s, then %s is required', (method, path, scope) => {
    expect(requiredScope(method, path)).toBe(scope);
  });

  it.each([
    '/shieldx',
    '/api/auditx',
    '/api',
    '/healthz',
    '/api/auth/keys',
    '/api/alert-channels',
    '/',
  ])('when the path is %s, then this layer does not gate it', (path) =>
    expect(requiredScope('GET', path)).toBeUndefined(),
  );

  it('when /audit and /api/audit are asked, then each has its own row', () => {
    expect(requiredScope('GET', '/audit/x')).toBe('audit:read');
    expect(requiredScope('GET', '/api/audit/x')).toBe('profile:read');
  });
});

describe('scopesGrant', () => {
  it('when the key has *, then every scope is granted', () => {
    expect(scopesGrant(['*'], 'admin:*')).toBe(true);
    expect(scopesGrant(['*'], 'shield:write')).toBe(true);
  });

  it('when the key has <namespace>:*, then that namespace’s read and write are granted', () => {
    expect(scopesGrant(['shield:*'], 'shield:read')).toBe(true);
    expect(scopesGrant(['shield:*'], 'shield:write')).toBe(true);
    expect(scopesGrant(['shield:*'], 'audit:read')).toBe(false);
    expect(scopesGrant(['shield:*'], 'shieldx:read')).toBe(false);
  });

  it('when the key has exactly the scope, then it is granted; a near miss is not', () => {
    expect(scopesGrant(['audit:read'], 'audit:read')).toBe(true);
    expect(scopesGrant(['audit:read'], 'audit:write')).toBe(false);
    expect(scopesGrant(['admin:read'], 'admin:*')).toBe(false);
    expect(scopesGrant([], 'audit:read')).toBe(false);
  });
});
