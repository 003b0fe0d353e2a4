import {
  accountKey,
  FailureBudget,
  LOGIN_THROTTLE,
  sourceKey,
  throttleDelayMs,
} from '../../src/accounts/login-throttle';
import { authorization } from '../../src/auth/authorization';
import { bearerToken } from '../../src/auth/session-auth';

describe('login throttle policy', () => {
  it('when an account name fails, then the first 4 failures cost nothing and each further one doubles the wait', () => {
    const rule = LOGIN_THROTTLE.account;
    expect([1, 2, 3, 4].map((n) => throttleDelayMs(n, rule))).toEqual([0, 0, 0, 0]);
    expect([5, 6, 7, 8].map((n) => throttleDelayMs(n, rule))).toEqual([1000, 2000, 4000, 8000]);
    expect(throttleDelayMs(200, rule)).toBe(15 * 60_000);
  });

  it('when a source address fails, then it gets 20 free failures (NAT) before waiting', () => {
    expect(throttleDelayMs(19, LOGIN_THROTTLE.source)).toBe(0);
    expect(throttleDelayMs(20, LOGIN_THROTTLE.source)).toBe(1000);
  });

  it('when the same IPv6 /64 or an IPv4-mapped form signs in, then it is one source', () => {
    expect(sourceKey('2001:db8:1:2:aaaa::1')).toBe(sourceKey('2001:db8:1:2:bbbb::9'));
    expect(sourceKey('2001:db8:1:3::1')).not.toBe(sourceKey('2001:db8:1:2::1'));
    expect(sourceKey('::ffff:203.0.113.7')).toBe(sourceKey('203.0.113.7'));
    expect(sourceKey(undefined)).toBe('source:unknown');
  });

  it('when an email is keyed, then only its digest is kept, the same for any letter case given normalised', () => {
    expect(accountKey('me@example.com')).toMatch(/^account:[0-9a-f]{64}$/);
    expect(accountKey('me@example.com')).not.toContain('example');
  });
});

describe('failure budget (every source, devices not known)', () => {
  function budget(perMinute: number) {
    let now = Date.parse('2026-03-01T12:00:00Z');
    const failures = new FailureBudget(perMinute, () => new Date(now));
    return { failures, advance: (ms: number) => (now += ms) };
  }
  const refusal = (take: () => unknown) => {
    try {
      take();
    } catch (err) {
      return err;
    }
    throw new Error('not refused');
  };

  it('when a minute has seen the budgeted failures, then the next attempt is refused (rate_limited, login_throttled) until the oldest is a minute old', () => {
    const { failures, advance } = budget(3);
    failures.take();
    advance(10_000);
    failures.take();
    failures.take();
    expect(refusal(() => failures.take())).toMatchObject({
      kind: 'rate_limited',
      detail: { error: 'login_throttled', retry_after_seconds: 50 },
      retryAfterSeconds: 50,
    });
    advance(50_000);
    expect(() => failures.take()).not.toThrow();
    expect(refusal(() => failures.take())).toMatchObject({ retryAfterSeconds: 10 });
  });

  it('when an attempt turns out not to fail, then it gives its place back (once only)', () => {
    const { failures } = budget(2);
    const notFailed = failures.take();
    failures.take();
    notFailed();
    notFailed();
    failures.take();
    expect(refusal(() => failures.take())).toMatchObject({ kind: 'rate_limited' });
  });
});

describe('Authorization header', () => {
  const token = 'A'.repeat(43);
  it.each(['Bearer', 'bearer', 'BEARER', 'bEaReR'])(
    'when the scheme is written %s, then the bearer token is read (RFC 9110: case-insensitive)',
    (scheme) => {
      expect(bearerToken(`${scheme} ${token}`)).toBe(token);
    },
  );

  it.each(['Basic abc', `Bearer`, `Bearer ${token} extra`, `Bearer${token}`, `Bearer short`, ''])(
    'when the header is %j, then no bearer token is read',
    (header) => {
      expect(bearerToken(header)).toBeUndefined();
    },
  );

  it('when a foreign scheme is sent in any case, then it is recognised by its lower-cased name', () => {
    expect(authorization('basic dXNlcjpwYXNz')).toEqual({
      scheme: 'basic',
      credentials: 'dXNlcjpwYXNz',
    });
    expect(authorization('AWS4-HMAC-SHA256 Credential=AKIA/x')?.scheme).toBe('aws4-hmac-sha256');
  });
});
