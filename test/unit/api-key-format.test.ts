import { generateApiKey, parseApiKey, secretMatches } from '../../src/keys/api-key-format';

describe('API key format', () => {
  it('when a key is generated, then it reads svc_<id>_<secret> and parses back', () => {
    const key = generateApiKey();
    expect(key.value).toMatch(/^svc_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
    expect(parseApiKey(key.value)).toEqual({ keyId: key.keyId, secret: key.secret });
    expect(key.prefix).toBe(key.value.slice(0, 'svc_'.length + 12 + 1 + 4));
    expect(key.secretHash).toMatch(/^[0-9a-f]{64}$/);
    expect(key.secretHash).not.toContain(key.secret);
  });

  it('when many keys are generated, then ids and secrets do not repeat', () => {
    const keys = Array.from({ length: 500 }, generateApiKey);
    expect(new Set(keys.map((k) => k.keyId)).size).toBe(500);
    expect(new Set(keys.map((k) => k.secret)).size).toBe(500);
  });

  it.each([
    '',
    'svc_',
    'svc_abc_def',
    `sk_${'a'.repeat(12)}_${'b'.repeat(43)}`,
    `svc_${'A'.repeat(12)}_${'b'.repeat(43)}`,
    `svc_${'a'.repeat(12)}_${'b'.repeat(42)}`,
    `svc_${'a'.repeat(12)}_${'b'.repeat(43)} `,
  ])('when the value is %j, then it is not a key', (value) => {
    expect(parseApiKey(value)).toBeNull();
  });

  it('when the secret differs by one character, then it does not match', () => {
    const key = generateApiKey();
    expect(secretMatches(key.secret, key.secretHash)).toBe(true);
    const other = key.secret.slice(0, -1) + (key.secret.endsWith('A') ? 'B' : 'A');
    expect(secretMatches(other, key.secretHash)).toBe(false);
  });
});
