import request from 'supertest';
import { createKey, signUpAndLogIn } from '../support/accounts';
import { createTestApp, type TestApp } from '../support/test-app';

// The spec's scope table, restated here on purpose: the test checks the code's table against it.
const SPEC_TABLE: [prefix: string, read: string, write: string][] = [
  ['/api/admin', 'admin:*', 'admin:*'],
  ['/api/audit', 'profile:read', 'profile:write'],
  ['/api/payments', 'payments:read', 'payments:write'],
  ['/api/privacy', 'privacy:read', 'privacy:write'],
  ['/api/threat-events', 'threats:read', 'threats:read'],
  ['/api/threat-log', 'threats:read', 'threats:read'],
  ['/api/canaries', 'canaries:read', 'canaries:read'],
  ['/api/community', 'community:read', 'community:read'],
  ['/api/breaches', 'breaches:read', 'breaches:write'],
  ['/api/dashboard', 'dashboard:read', 'dashboard:read'],
  ['/api/referral', 'referral:read', 'referral:write'],
  ['/api/settings', 'settings:read', 'settings:write'],
  ['/api/workflow-runs', 'threats:read', 'threats:read'],
  ['/api/weekly', 'threats:read', 'threats:read'],
  ['/api/users', 'profile:read', 'profile:write'],
  ['/api/emails', 'profile:read', 'profile:write'],
  ['/api/onboard', 'profile:write', 'profile:write'],
  ['/agent', 'agent:read', 'agent:write'],
  ['/audit', 'audit:read', 'audit:write'],
  ['/shield', 'shield:read', 'shield:write'],
  ['/honeypot', 'honeypot:read', 'honeypot:write'],
  ['/rag', 'rag:read', 'rag:write'],
];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const namespaceOf = (scope: string) => scope.split(':')[0]!;

let t: TestApp;
/** Per row: a key with the read scope, the write scope, `<ns>:*`, `*`, and an unrelated scope. */
const keys = new Map<string, Record<'read' | 'write' | 'wildcard' | 'all' | 'wrong', string>>();

beforeAll(async () => {
  t = await createTestApp();
  await Promise.all(
    SPEC_TABLE.map(async ([prefix, read, write]) => {
      const who = await signUpAndLogIn(t.app);
      // Only operator accounts may hold admin scopes (test/integration/admin-api.test.ts).
      if (prefix === '/api/admin') {
        await t.mongo.db
          .collection('users')
          .updateOne({ _id: who.userId as never }, { $set: { role: 'operator' } });
      }
      const make = async (scope: string) =>
        (await createKey(t.app, who.token, { scopes: [scope] })).key;
      keys.set(prefix, {
        read: await make(read),
        write: await make(write),
        wildcard: await make(`${namespaceOf(read)}:*`),
        all: await make('*'),
        wrong: await make('unrelated:read'),
      });
    }),
  );
  // Each row signs up its own account (five keys is the per-account limit), and each sign-up costs
  // two OWASP-strength password hashes: on a busy 2-core machine that alone can take a minute.
}, 180_000);
afterAll(() => t.close());

const call = (method: string, path: string, key?: string) => {
  const req = request(t.app)[method.toLowerCase() as 'get'](path);
  return key === undefined ? req : req.set('X-API-Key', key);
};

/** Past the gate: whatever the route answers (404, 401, a route's own 403), it is not the gate's refusal. */
function expectGatePassed(res: request.Response) {
  expect(String(res.body?.detail)).not.toMatch(/does not have the required scope/);
}

const cases = SPEC_TABLE.flatMap(([prefix, read, write]) =>
  METHODS.map((method) => [prefix, method, WRITES.has(method) ? write : read] as const),
);

describe.each(cases)('%s with %s (requires %s)', (prefix, method, scope) => {
  const path = `${prefix}/scope-gate-probe`;
  const keyFor = (kind: 'read' | 'write' | 'wildcard' | 'all' | 'wrong') => keys.get(prefix)![kind];

  it('when the key has exactly that scope, then the gate lets it through', async () => {
    const key = keyFor(WRITES.has(method) ? 'write' : 'read');
    expectGatePassed(await call(method, path, key));
  });

  it('when the key has another scope, then 403 names the required scope', async () => {
    const res = await call(method, path, keyFor('wrong'));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ detail: `The API key does not have the required scope: ${scope}` });
  });

  it('when the key has the namespace wildcard, then the gate lets it through', async () => {
    expectGatePassed(await call(method, path, keyFor('wildcard')));
  });

  it('when the key has *, then the gate lets it through', async () => {
    expectGatePassed(await call(method, path, keyFor('all')));
  });

  it('when there is no key, then this layer does not refuse it', async () => {
    expectGatePassed(await call(method, path));
  });
});

describe('read and write scopes differ', () => {
  it.each(SPEC_TABLE.filter(([, read, write]) => read !== write))(
    'when a key with only the read scope writes under %s, then 403',
    async (prefix, _read, write) => {
      const res = await call('POST', `${prefix}/x`, keys.get(prefix)!.read);
      expect(res.status).toBe(403);
      expect(res.body.detail).toContain(write);
    },
  );
});

describe('prefix boundaries', () => {
  const shieldKeyless = () => keys.get('/api/audit')!.read; // profile:read only

  it('when the path is /shieldx or /api/auditx, then the gate does not apply (404, not 403)', async () => {
    expect((await call('GET', '/shieldx', shieldKeyless())).status).toBe(404);
    expect((await call('POST', '/shieldx/inspect', shieldKeyless())).status).toBe(404);
    expect((await call('GET', '/api/auditx', keys.get('/shield')!.read)).status).toBe(404);
  });

  it('when /audit is called with a profile key, then 403 asks for audit:read', async () => {
    const res = await call('GET', '/audit/x', keys.get('/api/audit')!.read);
    expect(res.body.detail).toMatch(/audit:read$/);
  });

  it('when /api/audit is called with an audit key, then 403 asks for profile:read', async () => {
    const res = await call('GET', '/api/audit/trail', keys.get('/audit')!.read);
    expect(res.body.detail).toMatch(/profile:read$/);
  });

  it('when the path differs only in letter case, then the same scope is required', async () => {
    const res = await call('POST', '/SHIELD/inspect', keys.get('/shield')!.read);
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/shield:write$/);
  });

  it('when a session token calls a gated prefix, then no scope is asked for', async () => {
    const who = await signUpAndLogIn(t.app);
    const res = await request(t.app)
      .get('/api/audit/trail')
      .set('Authorization', `Bearer ${who.token}`);
    expect(res.status).toBe(200);
  });
});
