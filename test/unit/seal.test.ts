import {
  canonicalJson,
  contentHash,
  toJsonObject,
  type SealedFields,
} from '../../src/evidence/seal';

describe('canonicalJson (RFC 8785)', () => {
  it('when given the RFC’s primitive-data example, then it produces the RFC’s output', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        ' "literals": [null, true, false]}',
    ) as unknown;
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('when keys need sorting, then they sort by UTF-16 code units as the RFC’s example does', () => {
    const input = JSON.parse(
      '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh",' +
        ' "1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control",' +
        ' "\\u00f6": "Latin Small Letter O With Diaeresis"}',
    ) as unknown;
    expect(canonicalJson(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control",' +
        '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",' +
        '"\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  // RFC 8785 Appendix B: IEEE 754 doubles and their canonical text.
  it.each([
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ])('when the number is 0x%s, then it reads %s', (bits, text) => {
    const value = Buffer.from(bits, 'hex').readDoubleBE(0);
    expect(canonicalJson(value)).toBe(text);
  });

  it('when the value cannot be JSON (NaN, Infinity), then it is refused', () => {
    expect(() => canonicalJson(NaN)).toThrow();
    expect(() => canonicalJson({ a: Infinity })).toThrow();
  });
});

describe('contentHash', () => {
  const fields: SealedFields = {
    logId: 'evd_1',
    accountId: 'usr_1',
    seq: 1,
    kind: 'audit.api_key.created',
    sealedAt: new Date('2026-01-02T03:04:05.678Z'),
    prevHash: null,
    data: { b: 1, a: ['x', { z: true, y: null }] },
  };

  it('when the same fields come in any key order, then the hash is the same', () => {
    const reordered = { ...fields, data: { a: ['x', { y: null, z: true }], b: 1 } };
    expect(contentHash(reordered)).toBe(contentHash(fields));
    expect(contentHash(fields)).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each<[string, Partial<SealedFields>]>([
    ['log id', { logId: 'evd_2' }],
    ['account', { accountId: 'usr_2' }],
    ['sequence', { seq: 2 }],
    ['kind', { kind: 'audit.api_key.used' }],
    ['seal time', { sealedAt: new Date('2026-01-02T03:04:05.679Z') }],
    ['previous hash', { prevHash: 'a'.repeat(64) }],
    ['data', { data: { b: 2, a: ['x', { z: true, y: null }] } }],
  ])('when the %s changes, then the hash changes', (_name, change) => {
    expect(contentHash({ ...fields, ...change })).not.toBe(contentHash(fields));
  });
});

describe('toJsonObject', () => {
  it('when data holds dates and undefined, then it becomes what the database will give back', () => {
    expect(toJsonObject({ at: new Date('2026-01-01T00:00:00Z'), gone: undefined, n: 1 })).toEqual({
      at: '2026-01-01T00:00:00.000Z',
      n: 1,
    });
  });

  it('when data is not an object, then it is refused', () => {
    expect(() => toJsonObject([1, 2])).toThrow(TypeError);
  });
});
