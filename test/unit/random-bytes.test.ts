import { pooledRandomBytes } from '../../src/random-bytes';

describe('pooled random bytes', () => {
  it('hands out each byte once, across blocks, and never changes what it handed out', () => {
    const draws = Array.from({ length: 2_000 }, (_, i) => pooledRandomBytes(i % 2 ? 16 : 12));
    const copies = draws.map((bytes) => bytes.toString('hex'));
    expect(draws.map((bytes) => bytes.length)).toEqual(draws.map((_, i) => (i % 2 ? 16 : 12)));
    // 28,000 bytes: several blocks, each a fresh draw rather than the same bytes again.
    expect(new Set(copies).size).toBe(draws.length);
    pooledRandomBytes(10_000);
    expect(draws.map((bytes) => bytes.toString('hex'))).toEqual(copies);
  });

  it('gives a draw larger than a block whole', () => {
    const bytes = pooledRandomBytes(10_000);
    expect(bytes.length).toBe(10_000);
    expect(new Set(bytes).size).toBeGreaterThan(200);
  });
});
