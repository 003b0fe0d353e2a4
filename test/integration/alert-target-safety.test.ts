import ipaddr from 'ipaddr.js';
import request from 'supertest';
import { IPV4_SPECIAL_BLOCKS, IPV6_SPECIAL_BLOCKS } from '../../src/net/special-purpose-addresses';
import { signUpAndLogIn, type SignedIn } from '../support/accounts';
import { createTestApp, type TestApp } from '../support/test-app';

let t: TestApp;
let who: SignedIn;

beforeAll(async () => {
  t = await createTestApp(); // ALLOW_PRIVATE_WEBHOOK_TARGETS off, as in production
  who = await signUpAndLogIn(t.app);
});
afterAll(() => t.close());

const SECRET = 'a-webhook-secret-of-some-length';
const PUBLIC_URL = 'https://93.184.216.34/hooks/incoming';
const auth = () => ({ Authorization: `Bearer ${who.token}` });

/** One address of every registry block (its first), plus the spellings the attack report used. */
const HOSTS = [
  ...IPV4_SPECIAL_BLOCKS.map((b) => ipaddr.parseCIDR(b.cidr)[0].toString()),
  ...IPV6_SPECIAL_BLOCKS.map((b) => `[${ipaddr.parseCIDR(b.cidr)[0].toString()}]`),
  '[::127.0.0.1]',
  '[::7f00:1]',
  '[::a9fe:a9fe]',
  '[::ffff:169.254.169.254]',
  '[64:ff9b::7f00:1]',
  '[2002:7f00:1::]',
  '2130706433',
  '0x7f000001',
  '0177.0.0.1',
  '127.1',
  '169.254.43518',
  'localhost',
  'LOCALHOST',
];

describe.each(['slack', 'discord', 'webhook'])('%s channel targets', (kind) => {
  const body = (url: string) => ({
    kind,
    name: 'target check',
    url,
    ...(kind === 'webhook' && { secret: SECRET }),
  });

  it.each(HOSTS)(
    'when created for https://%s/, then 422 names the url and nothing is stored',
    async (host) => {
      const before = (await request(t.app).get('/api/alert-channels').set(auth())).body.channels
        .length;
      const res = await request(t.app)
        .post('/api/alert-channels')
        .set(auth())
        .send(body(`https://${host}/hook`));
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(/^url: resolves to .*, which is not a public address/);
      const after = (await request(t.app).get('/api/alert-channels').set(auth())).body.channels
        .length;
      expect(after).toBe(before);
    },
  );

  it('when an existing channel is pointed at any of them, then 422 each time and its URL is unchanged', async () => {
    const created = await request(t.app)
      .post('/api/alert-channels')
      .set(auth())
      .send(body(PUBLIC_URL));
    expect(created.status).toBe(201);
    for (const host of HOSTS) {
      const res = await request(t.app)
        .patch(`/api/alert-channels/${created.body.id}`)
        .set(auth())
        .send({ url: `https://${host}/hook` });
      expect([host, res.status]).toEqual([host, 422]);
    }
    const read = await request(t.app).get(`/api/alert-channels/${created.body.id}`).set(auth());
    expect(read.body.url).toBe(PUBLIC_URL);
  });
});
