import { CANARY_KINDS, makeDecoy, tokenDigest } from '../../src/canaries/decoys';
import { assessRisk, interpret, type RiskInput } from '../../src/canaries/risk';
import { platformOf } from '../../src/canaries/tripwires';
import { parseApiKey } from '../../src/keys/api-key-format';

const settings = {
  publicBaseUrl: 'https://svc.example.com/',
  decoyEmailDomain: 'decoys.example.com',
};

describe('decoys', () => {
  it('when a decoy API key is made, then it has exactly the shape of a real key', () => {
    const decoy = makeDecoy('api_key', settings);
    expect(parseApiKey(decoy.value)).not.toBeNull();
    expect(decoy.tokens).toEqual([decoy.value]);
  });

  it('when each kind is made twice, then values differ and every token is distinct', () => {
    for (const kind of CANARY_KINDS) {
      const [a, b] = [makeDecoy(kind, settings), makeDecoy(kind, settings)];
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
    const db = new URL(makeDecoy('database_url', settings).value);
    expect(db.protocol).toBe('postgres:');
    expect(makeDecoy('database_url', settings).tokens).toHaveLength(1);
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
      interpret({ kind: 'url', plantedOn: null, attackerType: 'unknown', sourceIp: '', hits: 1 }),
    ).toMatch(/^A tripwire URL was used from an unknown address\. /);
  });

  it('when interpreted, then the sentence says what fired, from where, how often, and what to do', () => {
    const text = interpret({
      kind: 'aws_access_key',
      plantedOn: 'GitHub',
      attackerType: 'datacenter',
      sourceIp: '203.0.113.9',
      hits: 12,
    });
    expect(text).toBe(
      'A decoy cloud access key planted on GitHub was used from 203.0.113.9 (datacenter) 12 times. Find where this key was stored and treat that place as exposed.',
    );
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
