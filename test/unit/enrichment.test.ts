import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IpEnricher } from '../../src/alerts/enrichment';

// The shipped Tor list is empty (see ip-data/README.md): this stand-in entry exercises the lookup.
jest.mock('../../src/alerts/ip-data/tor-exits.json', () => ['193.0.6.139']);

/** Stand-in for AbuseIPDB on 127.0.0.1: each test sets how it answers and reads what it got. */
let server: Server;
let baseUrl: string;
let answer: (req: IncomingMessage, res: ServerResponse) => void;
let received: IncomingMessage[];

beforeAll(async () => {
  server = createServer((req, res) => {
    received.push(req);
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received = [];
  answer = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: { ipAddress: '3.5.140.2', abuseConfidenceScore: 87 } }));
  };
});

const withKey = (timeoutMs = 2000) =>
  new IpEnricher({ abuseIpdbKey: 'test-key', abuseIpdbBaseUrl: baseUrl, timeoutMs });

describe('IpEnricher: location and type', () => {
  it('when the address is a well-known public one, then the bundled databases give its country and network', async () => {
    const enricher = new IpEnricher();
    await expect(enricher.enrich('8.8.8.8')).resolves.toMatchObject({
      country: 'US',
      org: 'Google LLC (AS15169)',
    });
    await expect(enricher.enrich('2001:4860:4860::8888')).resolves.toMatchObject({
      country: expect.stringMatching(/^[A-Z]{2}$/),
      org: 'Google LLC (AS15169)',
    });
    await expect(enricher.enrich('193.0.6.139')).resolves.toMatchObject({ country: 'NL' });
  });

  it('when a hosting provider announces the address, then it is a datacenter named by its AS', async () => {
    const result = await new IpEnricher().enrich('3.5.140.2');
    expect(result).toEqual({
      ip: '3.5.140.2',
      country: expect.stringMatching(/^[A-Z]{2}$/),
      city: expect.any(String),
      org: 'Amazon.com, Inc. (AS16509)',
      type: 'datacenter',
      abuseScore: null,
    });
    await expect(new IpEnricher().enrich('2a01:4f8::1')).resolves.toMatchObject({
      org: 'Hetzner Online GmbH (AS24940)',
      type: 'datacenter',
    });
  });

  it('when an access network announces the address, then its type is isp', async () => {
    await expect(new IpEnricher().enrich('81.2.69.142')).resolves.toMatchObject({
      country: 'GB',
      org: 'Andrews & Arnold Ltd (AS20712)',
      type: 'isp',
    });
  });

  it('when the data folder has no files, then location and network are empty and nothing throws', async () => {
    await expect(new IpEnricher({ dataDir: '/nonexistent' }).enrich('8.8.8.8')).resolves.toEqual({
      ip: '8.8.8.8',
      country: '',
      city: '',
      org: '',
      type: 'unknown',
      abuseScore: null,
    });
  });

  it('when the address is IPv4-mapped IPv6, then it is enriched as the IPv4 address', async () => {
    const enricher = new IpEnricher();
    await expect(enricher.enrich('::ffff:3.5.140.2')).resolves.toEqual(
      await enricher.enrich('3.5.140.2'),
    );
  });

  it('when the address is in the Tor exit list, then its type is tor', async () => {
    await expect(new IpEnricher().enrich('::ffff:193.0.6.139')).resolves.toMatchObject({
      ip: '193.0.6.139',
      type: 'tor',
    });
  });

  it.each([
    '127.0.0.1',
    '::1',
    '::ffff:127.0.0.1',
    '10.1.2.3',
    '172.16.0.9',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    'fd00::1',
    'fe80::1',
    '0.0.0.0',
  ])(
    'when the address is %s, then it is internal with empty fields and no reputation call',
    async (ip) => {
      const result = await withKey().enrich(ip);
      expect(result).toEqual({
        ip: ip === '::ffff:127.0.0.1' ? '127.0.0.1' : ip,
        country: '',
        city: '',
        org: '',
        type: 'internal',
        abuseScore: null,
      });
      expect(received).toHaveLength(0);
    },
  );

  it.each(['', 'not-an-ip', '127.1', '2130706433', '999.1.1.1', '1.2.3.4/24', '::gg'])(
    'when the input is %j, then every field is empty and nothing throws',
    async (input) => {
      await expect(withKey().enrich(input)).resolves.toEqual({
        ip: input,
        country: '',
        city: '',
        org: '',
        type: 'unknown',
        abuseScore: null,
      });
      expect(received).toHaveLength(0);
    },
  );
});

describe('IpEnricher: AbuseIPDB reputation', () => {
  it('when a key is configured, then the score is returned and the key and query are sent', async () => {
    await expect(withKey().enrich('3.5.140.2')).resolves.toMatchObject({ abuseScore: 87 });
    expect(received).toHaveLength(1);
    const [req] = received;
    const url = new URL(req!.url!, baseUrl);
    expect(url.pathname).toBe('/api/v2/check');
    expect(url.searchParams.get('ipAddress')).toBe('3.5.140.2');
    expect(url.searchParams.get('maxAgeInDays')).toBe('90');
    expect(req!.headers.key).toBe('test-key');
    expect(req!.headers.accept).toBe('application/json');
  });

  it('when the same address is enriched twice, then the second answer comes from the cache', async () => {
    const enricher = withKey();
    await enricher.enrich('3.5.140.2');
    await expect(enricher.enrich('::ffff:3.5.140.2')).resolves.toMatchObject({ abuseScore: 87 });
    expect(received).toHaveLength(1);
  });

  it('when AbuseIPDB answers 500, then the score is null and the failure is not cached', async () => {
    answer = (_req, res) => {
      res.writeHead(500);
      res.end('oops');
    };
    const enricher = withKey();
    await expect(enricher.enrich('3.5.140.2')).resolves.toMatchObject({
      country: expect.stringMatching(/^[A-Z]{2}$/),
      abuseScore: null,
    });
    await enricher.enrich('3.5.140.2');
    expect(received).toHaveLength(2);
  });

  it.each([
    ['not JSON', 'not json'],
    ['no score', JSON.stringify({ data: {} })],
    ['a score out of range', JSON.stringify({ data: { abuseConfidenceScore: 250 } })],
  ])('when the body has %s, then the score is null', async (_what, body) => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    };
    await expect(withKey().enrich('3.5.140.2')).resolves.toMatchObject({ abuseScore: null });
  });

  it('when AbuseIPDB never answers, then the score is null within about the timeout', async () => {
    answer = () => {};
    const started = Date.now();
    await expect(withKey(200).enrich('3.5.140.2')).resolves.toMatchObject({
      country: expect.stringMatching(/^[A-Z]{2}$/),
      abuseScore: null,
    });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('when AbuseIPDB sends headers but stalls the body, then the score is null within about the timeout', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":');
    };
    const started = Date.now();
    await expect(withKey(200).enrich('3.5.140.2')).resolves.toMatchObject({ abuseScore: null });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('when nothing listens at the base URL, then the score is null', async () => {
    const enricher = new IpEnricher({ abuseIpdbKey: 'k', abuseIpdbBaseUrl: 'http://127.0.0.1:1' });
    await expect(enricher.enrich('3.5.140.2')).resolves.toMatchObject({ abuseScore: null });
  });

  it('when no key is configured, then the score is null and no request is made', async () => {
    const enricher = new IpEnricher({ abuseIpdbBaseUrl: baseUrl });
    await expect(enricher.enrich('3.5.140.2')).resolves.toMatchObject({
      type: 'datacenter',
      abuseScore: null,
    });
    await expect(
      new IpEnricher({ abuseIpdbKey: '', abuseIpdbBaseUrl: baseUrl }).enrich('3.5.140.2'),
    ).resolves.toMatchObject({ abuseScore: null });
    expect(received).toHaveLength(0);
  });
});
