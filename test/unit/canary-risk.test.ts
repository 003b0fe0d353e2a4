import { tokenDigest } from '../../src/canaries/decoys';
import { CANARY_KINDS, makeDecoy, platformOf } from '../../src/canaries/kinds';
import { assessRisk, interpret, type RiskInput } from '../../src/alerts/risk';
import { parseApiKey } from '../../src/keys/api-key-format';

const settings = {
  publicBaseUrl: 'https://svc.example.com/',
  decoyEmailDomain: 'decoys.example.com',
  dnsDomain: 'canary.example.com',
  publicHost: 'tripwire.example.com',
  postgresPort: 15432,
  wireguard: { publicKey: 'HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw=', port: 51820 },
};

describe('decoys', () => {
  it('when a decoy API key is made, then it has exactly the shape of a real key', () => {
    const decoy = makeDecoy('api_key', settings);
    expect(parseApiKey(decoy.value)).not.toBeNull();
    expect(decoy.tokens).toEqual([decoy.value]);
  });

  it('when MySQL dumps are made, then every customer email is distinct (the column is UNIQUE)', () => {
    for (let n = 0; n < 200; n++) {
      const sql = makeDecoy('mysql_dump', settings).artifact!.body.toString();
      const emails = [...sql.matchAll(/'([^',]+@[^',]+)'/g)].map((match) => match[1]);
      expect(emails.length).toBeGreaterThan(39);
      expect(new Set(emails).size).toBe(emails.length);
    }
  });

  it('when each kind is made twice, then values differ and every token is distinct', () => {
    for (const kind of CANARY_KINDS) {
      const options = {
        redirectUrl: 'https://intranet.example/',
        siteUrl: 'https://login.example',
      };
      const [a, b] = [makeDecoy(kind, settings, options), makeDecoy(kind, settings, options)];
      expect(a.value).not.toBe(b.value);
      expect(new Set([...a.tokens, ...b.tokens].map(tokenDigest)).size).toBe(
        a.tokens.length + b.tokens.length,
      );
    }
  });

  it('when shapes matter, then cloud keys, URLs, addresses and database URLs look right', () => {
    const aws = makeDecoy('aws_access_key', settings);
    expect(aws.value).toMatch(/^AKIA[A-Z2-7]{16}$/);
    expect(aws.secret).toHaveLength(40);
    expect(makeDecoy('url', settings).value).toMatch(/^https:\/\/svc\.example\.com\/r\/[\w-]{24}$/);
    expect(makeDecoy('email', settings).value).toMatch(
      /^[a-z2-7]{6}\.[a-z2-7]{6}@decoys\.example\.com$/,
    );
    const dbDecoy = makeDecoy('database_url', settings);
    const db = new URL(dbDecoy.value);
    expect(db).toMatchObject({ protocol: 'postgres:', hostname: 'tripwire.example.com' });
    expect(db.port).toBe('15432');
    expect(dbDecoy.tokens).toEqual([db.password, `pg-user:${db.username}`]);
    expect(makeDecoy('dns', settings).value).toMatch(/^[a-z2-7]{20}\.canary\.example\.com$/);
  });

  it('when a cloud key is made, then its profile sends every call to the decoy AWS endpoint', () => {
    const aws = makeDecoy('aws_access_key', settings);
    const [credentials, config] = aws.files!;
    expect(credentials).toEqual({
      path: '~/.aws/credentials',
      content: `[default]\naws_access_key_id = ${aws.value}\naws_secret_access_key = ${aws.secret}\n`,
    });
    expect(config!.content).toContain('endpoint_url = https://svc.example.com/aws\n');
  });

  it('when a WireGuard config is asked for without the decoy endpoint configured, then it is refused', () => {
    expect(() => makeDecoy('wireguard', { ...settings, wireguard: undefined })).toThrow(
      expect.objectContaining({
        kind: 'conflict',
        detail: expect.stringContaining('WIREGUARD_PRIVATE_KEY'),
      }),
    );
  });

  it('when a kubeconfig is made, then its cluster is the decoy API and its token fires', () => {
    const kube = makeDecoy('kubeconfig', settings);
    expect(kube.value).toContain('    server: https://svc.example.com/k8s\n');
    expect(kube.value).toContain(`    token: ${kube.tokens[0]}\n`);
    expect(kube.tokens[0]).toMatch(/^eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+$/);
  });
});

describe('risk', () => {
  const base: RiskInput = {
    kind: 'api_key',
    attackerType: 'unknown',
    abuseScore: null,
    hits: 1,
    ageDays: 30,
  };

  it.each<[string, Partial<RiskInput>, number]>([
    ['a decoy key from an unknown source', {}, 60],
    ['from a Tor exit', { attackerType: 'tor' }, 80],
    [
      'from a datacenter with a bad reputation',
      { attackerType: 'datacenter', abuseScore: 100 },
      90,
    ],
    ['from inside the network', { attackerType: 'internal' }, 40],
    ['found within a week of planting', { ageDays: 2 }, 65],
    ['hit 8 times', { hits: 8 }, 75],
    ['hit a thousand times (repeats count at most 15)', { hits: 1000 }, 75],
    ['a tripwire URL', { kind: 'url' }, 40],
  ])('when %s, then the score follows the documented formula', (_case, change, score) => {
    expect(assessRisk({ ...base, ...change }).riskScore).toBe(score);
  });

  it('when scores cross the thresholds, then levels follow', () => {
    expect(assessRisk({ ...base, attackerType: 'tor' })).toMatchObject({
      riskLevel: 'critical',
      alertLevel: 'CRITICAL',
    });
    expect(assessRisk(base)).toMatchObject({ riskLevel: 'high', alertLevel: 'HIGH' });
    expect(assessRisk({ ...base, kind: 'email', attackerType: 'internal' })).toMatchObject({
      riskScore: 15,
      riskLevel: 'low',
      alertLevel: 'MEDIUM',
    });
  });

  it('when the owner did not say where it was planted, then the sentence leaves it out', () => {
    expect(
      interpret({
        kind: 'url',
        memo: '',
        plantedOn: null,
        attackerType: 'unknown',
        sourceIp: '',
        hits: 1,
      }),
    ).toMatch(/^A tripwire URL was used from an unknown address\. /);
  });

  it('when interpreted, then the sentence says what fired, from where, how often, and what to do', () => {
    const text = interpret({
      kind: 'aws_access_key',
      memo: 'prod .env on build box',
      plantedOn: 'GitHub',
      attackerType: 'datacenter',
      sourceIp: '203.0.113.9',
      hits: 12,
    });
    expect(text).toBe(
      'A decoy cloud access key "prod .env on build box" planted on GitHub was used from 203.0.113.9 (datacenter) 12 times. Find where this key was stored and treat that place as exposed.',
    );
  });

  it('when a DNS canary is looked up, then the sentence says the resolver is not the attacker', () => {
    const text = interpret({
      kind: 'dns',
      memo: 'wiki',
      plantedOn: null,
      attackerType: 'unknown',
      sourceIp: '',
      hits: 1,
    });
    expect(text).toMatch(/^A DNS canary hostname "wiki" was looked up \(through a DNS resolver/);
  });
});

describe('platform learned from the client', () => {
  it.each([
    ['curl/8.5.0', 'curl'],
    ['python-requests/2.31', 'python-requests'],
    ['Mozilla/5.0 (X11; Linux x86_64)', 'web browser'],
    ['', 'unknown client'],
  ])('when the user agent is %j, then the platform is %j', (ua, platform) => {
    expect(platformOf(ua)).toBe(platform);
  });
});
