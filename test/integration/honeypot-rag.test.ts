import request from 'supertest';
import { trapDeletedView, trapHitsView, trapView } from '../../src/honeypot/honeypot.routes';
import {
  documentDeletedView,
  leakListView,
  registeredDocumentView,
} from '../../src/rag/rag.routes';
import { createKey, signUpAndLogIn, type SignedIn } from '../support/accounts';
import { startAlertStack } from '../support/alert-stack';
import type { Receiver } from '../support/receiver';
import type { TestApp } from '../support/test-app';

const SECRET = 'honeypot-test-webhook-secret';

let t: TestApp;
let receiver: Receiver;
let stop: () => Promise<void>;

beforeAll(
  async () =>
    ({ t, receiver, stop } = await startAlertStack({
      TRUST_PROXY: 'loopback',
      ALERT_GATHER_MS: '300',
    })),
);
afterAll(() => stop());

const as = (who: SignedIn) => ({ Authorization: `Bearer ${who.token}` });

interface Account {
  who: SignedIn;
  key: string;
  alertsPath: string;
}

/** An account with a webhook channel and an API key holding every product scope. */
async function account(): Promise<Account> {
  const who = await signUpAndLogIn(t.app);
  const alertsPath = `/alerts/${who.userId}`;
  await request(t.app)
    .post('/api/alert-channels')
    .set(as(who))
    .send({ kind: 'webhook', name: 'hook', url: receiver.url(alertsPath), secret: SECRET })
    .expect(201);
  const { key } = await createKey(t.app, who.token, {
    scopes: ['honeypot:read', 'honeypot:write', 'rag:read', 'rag:write', 'shield:write'],
  });
  return { who, key, alertsPath };
}

async function alertsAt(path: string, timeoutMs = 20_000) {
  return (await receiver.waitFor(path, 1, timeoutMs)).map(
    (h) => JSON.parse(h.rawBody.toString()) as { data: Record<string, unknown> },
  );
}

/** How each resource is made, made to collect evidence, and addressed. */
const resources = {
  trap: {
    async create(a: Account) {
      const res = await request(t.app)
        .post('/honeypot/traps')
        .set('X-API-Key', a.key)
        .send({ name: 'admin panel', kind: 'endpoint' })
        .expect(201);
      const trap = trapView.parse(res.body);
      const url = new URL(trap.decoys[0]!.value);
      return {
        path: `/honeypot/traps/${trap.trap_id}`,
        canaryId: trap.decoys[0]!.canary_id,
        fire: () => request(t.app).get(url.pathname).expect(200),
      };
    },
    countField: 'hit_count',
    evidenceList: 'hits',
    views: { evidence: trapHitsView, deleted: trapDeletedView },
  },
  document: {
    async create(a: Account) {
      const res = await request(t.app)
        .post('/rag/documents')
        .set('X-API-Key', a.key)
        .send({ title: 'Pricing 2027', content: 'Internal pricing: enterprise tier at 40k.' })
        .expect(201);
      const document = registeredDocumentView.parse(res.body);
      const marked = document.marked_content;
      return {
        path: `/rag/documents/${document.document_id}`,
        canaryId: document.canary_id,
        fire: () =>
          request(t.app)
            .post('/rag/leaks')
            .set('X-API-Key', a.key)
            .send({ text: `found on a paste site: ${marked}` })
            .expect(202),
      };
    },
    countField: 'leak_count',
    evidenceList: 'leaks',
    views: { evidence: leakListView, deleted: documentDeletedView },
  },
};

describe.each(Object.entries(resources))('%s delete rules', (_name, resource) => {
  it('when it holds no evidence, then an API key may delete it', async () => {
    const a = await account();
    const r = await resource.create(a);
    const res = await request(t.app).delete(r.path).set('X-API-Key', a.key);
    expect(res.status).toBe(200);
    await request(t.app).get(r.path).set('X-API-Key', a.key).expect(404);
  });

  it('when it holds no evidence, then a console session may delete it', async () => {
    const a = await account();
    const r = await resource.create(a);
    await request(t.app).delete(r.path).set(as(a.who)).expect(200);
  });

  it('when it holds evidence, then an API key is refused: 409 without force, 403 with it', async () => {
    const a = await account();
    const r = await resource.create(a);
    await r.fire();
    await t.tripwires.flush();
    const plain = await request(t.app).delete(r.path).set('X-API-Key', a.key);
    expect(plain.status).toBe(409);
    expect(plain.body.detail).toContain('force=true');
    const forced = await request(t.app).delete(`${r.path}?force=true`).set('X-API-Key', a.key);
    expect(forced.status).toBe(403);
    const kept = await request(t.app).get(r.path).set('X-API-Key', a.key).expect(200);
    expect(kept.body[resource.countField]).toBe(1);
  });

  it('when it holds evidence, then a session with force=true removes it and the evidence', async () => {
    const a = await account();
    const r = await resource.create(a);
    await r.fire();
    await t.tripwires.flush();
    const listed = await request(t.app).get(`${r.path}/${resource.evidenceList}`).set(as(a.who));
    resource.views.evidence.parse(listed.body);
    const [record] = listed.body[resource.evidenceList] as { evidence: { content_hash: string } }[];
    await request(t.app).get(`/api/verify/${record!.evidence.content_hash}`).expect(200);

    const res = await request(t.app).delete(`${r.path}?force=true`).set(as(a.who));
    expect(res.status).toBe(200);
    resource.views.deleted.parse(res.body);
    await request(t.app).get(`/api/verify/${record!.evidence.content_hash}`).expect(404);
    const log = await request(t.app).get(`/api/threat-log?canary_id=${r.canaryId}`).set(as(a.who));
    expect(log.body.hits).toEqual([]);
  });

  it('when another account asks, then 403 for reading and deleting', async () => {
    const a = await account();
    const other = await account();
    const r = await resource.create(a);
    await request(t.app).get(r.path).set('X-API-Key', other.key).expect(403);
    await request(t.app).delete(r.path).set(as(other.who)).expect(403);
  });

  it('when it fires, then an alert goes out through the canary path', async () => {
    const a = await account();
    const r = await resource.create(a);
    await r.fire();
    const [alert] = await alertsAt(a.alertsPath);
    expect(alert?.data).toMatchObject({ canaryId: r.canaryId, event: 'canary.tripwire_triggered' });
  });
});

describe('honeypot and rag input and scopes', () => {
  it('when a credential trap is made, then it holds three decoys of real shapes', async () => {
    const a = await account();
    const res = await request(t.app)
      .post('/honeypot/traps')
      .set('X-API-Key', a.key)
      .send({ name: 'ci secrets', kind: 'credentials' })
      .expect(201);
    expect(res.body.decoys.map((d: { kind: string }) => d.kind)).toEqual([
      'api_key',
      'aws_access_key',
      'database_url',
    ]);
  });

  it('when a key lacks the product scope, then 403', async () => {
    const who = await signUpAndLogIn(t.app);
    const { key } = await createKey(t.app, who.token, { scopes: ['rag:read'] });
    await request(t.app).get('/honeypot/traps').set('X-API-Key', key).expect(403);
    await request(t.app).get('/rag/documents').set('X-API-Key', key).expect(200);
    await request(t.app)
      .post('/rag/documents')
      .set('X-API-Key', key)
      .send({ title: 'x', content: 'y' })
      .expect(403);
  });

  it.each([
    ['/honeypot/traps', { name: 'x', kind: 'tarpit' }, 'kind'],
    ['/honeypot/traps', { kind: 'endpoint' }, 'name'],
    ['/rag/documents', { title: 'x' }, 'content'],
    ['/rag/leaks', { text: '' }, 'text'],
  ])('when POST %s gets %j, then 422 names %s', async (path, body, field) => {
    const a = await account();
    const res = await request(t.app).post(path).set('X-API-Key', a.key).send(body);
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain(field);
  });

  it('when force is not true or false, then 422 names it and nothing is deleted', async () => {
    const a = await account();
    const r = await resources.trap.create(a);
    const res = await request(t.app).delete(`${r.path}?force=yes`).set(as(a.who));
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain('force');
    await request(t.app).get(r.path).set(as(a.who)).expect(200);
  });
});
