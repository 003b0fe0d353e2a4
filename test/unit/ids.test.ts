import { derivedTimeOrderedId, newId, newTimeOrderedId } from '../../src/ids';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ids', () => {
  it('gives random ids with their kind prefix, each different', () => {
    const ids = Array.from({ length: 1000 }, () => newId('usr'));
    expect(ids.every((id) => /^usr_[A-Za-z0-9_-]{16}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives time-ordered ids that sort in the order they were made, across milliseconds', async () => {
    const ids: string[] = [];
    for (let ms = 0; ms < 5; ms++) {
      for (let i = 0; i < 200; i++) ids.push(newTimeOrderedId('evd'));
      await sleep(2);
    }
    expect(
      ids.every((id) =>
        /^evd_[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id),
      ),
    ).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // Plain string order, as the database compares `_id`s.
    expect([...ids].sort()).toEqual(ids);
  });

  it('derives the same id from the same seed and instant, and sorts ids by their instants', () => {
    const at = new Date('2026-12-02T05:00:00.000Z');
    const id = derivedTimeOrderedId('thr', at, 'cnr_1|203.0.113.9');
    expect(id).toMatch(/^thr_[0-9a-z]{9}[A-Za-z0-9_-]{16}$/);
    expect(derivedTimeOrderedId('thr', at, 'cnr_1|203.0.113.9')).toBe(id);
    expect(derivedTimeOrderedId('thr', at, 'cnr_1|203.0.113.10')).not.toBe(id);
    const instants = [0, 1, 999, 1000, 36 ** 5, Date.parse('2100-01-01T00:00:00Z')];
    const ids = instants.map((ms, i) => derivedTimeOrderedId('thr', new Date(ms), `seed ${9 - i}`));
    expect([...ids].sort()).toEqual(ids);
  });
});
