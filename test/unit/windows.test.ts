import { dayWindow, minuteWindow, monthWindow, utcDate } from '../../src/metering/windows';

describe('UTC windows', () => {
  it.each([
    ['2026-11-21T09:37:12Z', '2026-11', '2026-12-01'],
    ['2026-12-31T23:59:59.999Z', '2026-12', '2027-01-01'],
    ['2028-02-29T12:00:00Z', '2028-02', '2028-03-01'],
    ['2026-03-01T00:00:00Z', '2026-03', '2026-04-01'],
  ])('when it is %s, then the month is %s and resets on %s', (now, key, resets) => {
    const w = monthWindow(new Date(now));
    expect([w.key, utcDate(w.resetsAt)]).toEqual([key, resets]);
  });

  it.each([
    ['2026-11-21T23:59:59.999Z', '2026-11-21', '2026-11-22'],
    ['2026-12-31T10:00:00Z', '2026-12-31', '2027-01-01'],
    ['2028-02-28T10:00:00Z', '2028-02-28', '2028-02-29'],
  ])('when it is %s, then the day is %s and resets on %s', (now, key, resets) => {
    const w = dayWindow(new Date(now));
    expect([w.key, utcDate(w.resetsAt)]).toEqual([key, resets]);
  });

  it('when it is mid-minute, then the burst window ends at the next whole minute', () => {
    const w = minuteWindow(new Date('2026-11-21T09:37:42.500Z'));
    expect(w.key).toBe('2026-11-21T09:37');
    expect(w.resetsAt.toISOString()).toBe('2026-11-21T09:38:00.000Z');
  });
});
