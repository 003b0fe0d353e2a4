import pino from 'pino';
import { DomainError } from '../../src/errors';
import type { CounterStore } from '../../src/metering/counters.repository';
import { Meter } from '../../src/metering/meter';
import { PLAN_LIMITS, type PlanLimits } from '../../src/metering/plan-limits';

/** Counters in a map, like the real store: an increment at the limit adds nothing. */
class MapCounters implements CounterStore {
  readonly counts = new Map<string, number>();
  /** Ids containing this string fail as an unreachable store would. */
  failing?: string;

  tryIncrement(id: string, limit: number): Promise<number | null> {
    if (this.failing && id.includes(this.failing)) return Promise.reject(new Error('store down'));
    const count = this.counts.get(id) ?? 0;
    if (count >= limit) return Promise.resolve(null);
    this.counts.set(id, count + 1);
    return Promise.resolve(count + 1);
  }
  decrement(id: string): Promise<void> {
    this.counts.set(id, (this.counts.get(id) ?? 0) - 1);
    return Promise.resolve();
  }
  read(id: string): Promise<number> {
    return Promise.resolve(this.counts.get(id) ?? 0);
  }
}

const NOW = new Date('2026-03-14T09:26:53.500Z');
const limits: PlanLimits = {
  ...PLAN_LIMITS,
  free: {
    ...PLAN_LIMITS.free,
    shield_inspections: { burstPerMinute: 2, perMonth: 3, perDay: 100 },
    canary_plants: { burstPerMinute: 100, perMonth: 100, perDay: 1 },
  },
  pro: {
    ...PLAN_LIMITS.pro,
    shield_inspections: { burstPerMinute: 2, perMonth: 10_000, perDay: 1_000 },
  },
};

function meterWith(counters = new MapCounters(), now = NOW) {
  const meter = new Meter({ counters, limits, clock: () => now, log: pino({ level: 'silent' }) });
  return { meter, counters };
}

async function refusal(attempt: Promise<unknown>): Promise<DomainError> {
  const err = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof DomainError)) throw new Error(`expected a domain error, got ${String(err)}`);
  return err;
}

const spent = (counters: MapCounters) => [...counters.counts.values()].reduce((a, b) => a + b, 0);

describe('Meter', () => {
  it('when a request is granted, then the burst window comes back as plain values', async () => {
    const { meter } = meterWith();
    const grant = await meter.consume('usr_1', 'free', 'shield_inspections');
    // 6.5 s are left in the minute: a client waits whole seconds.
    expect(grant.burst).toEqual({ limit: 2, remaining: 1, resetSeconds: 7 });
  });

  it('when the burst window is full, then it refuses with rate_limited, the seconds to wait and the burst_limit_exceeded body', async () => {
    const { meter, counters } = meterWith();
    await meter.consume('usr_1', 'free', 'shield_inspections');
    await meter.consume('usr_1', 'free', 'shield_inspections');
    const before = spent(counters);

    const err = await refusal(meter.consume('usr_1', 'free', 'shield_inspections'));

    expect(err.kind).toBe('rate_limited');
    expect(err.retryAfterSeconds).toBe(7);
    expect(err.detail).toEqual({
      error: 'burst_limit_exceeded',
      message: 'At most 2 shield_inspections a minute on the Free plan',
      limit: 2,
      retry_after_seconds: 7,
    });
    expect(spent(counters)).toBe(before);
  });

  it('when the month is spent, then it refuses with quota_exceeded and gives the burst place back', async () => {
    const { meter, counters } = meterWith();
    await meter.consume('usr_1', 'free', 'shield_inspections');
    await meter.consume('usr_1', 'free', 'shield_inspections');
    // The next minute's burst window has room; the month has one left, then none.
    const { meter: clockAhead } = meterWith(counters, new Date(NOW.getTime() + 60_000));
    await clockAhead.consume('usr_1', 'free', 'shield_inspections');
    const before = spent(counters);

    const err = await refusal(clockAhead.consume('usr_1', 'free', 'shield_inspections'));

    expect(err.kind).toBe('quota_exceeded');
    expect(err.retryAfterSeconds).toBeUndefined();
    expect(err.detail).toMatchObject({
      error: 'plan_limit_exceeded',
      metric: 'shield_inspections_per_month',
      plan: 'free',
      limit: 3,
      used: 3,
      resets_at: '2026-04-01',
    });
    expect(spent(counters)).toBe(before);
  });

  it('when the daily allowance is spent, then it refuses with quota_exceeded for the day', async () => {
    const { meter } = meterWith();
    await meter.consume('usr_1', 'free', 'canary_plants');

    const err = await refusal(meter.consume('usr_1', 'free', 'canary_plants'));

    expect(err.kind).toBe('quota_exceeded');
    expect(err.detail).toMatchObject({
      metric: 'canary_plants_per_day',
      limit: 1,
      resets_at: '2026-03-15',
    });
  });

  it('when the store fails for the daily allowance, then it fails closed with unavailable and spends nothing', async () => {
    const counters = new MapCounters();
    counters.failing = ':day:';
    const { meter } = meterWith(counters);

    const err = await refusal(meter.consume('usr_1', 'free', 'shield_inspections'));

    expect(err.kind).toBe('unavailable');
    expect(err.detail).toMatchObject({ error: 'daily_quota_unavailable' });
    expect(spent(counters)).toBe(0);
  });

  it('when the store fails for the burst and monthly windows, then the request still passes', async () => {
    const counters = new MapCounters();
    counters.failing = ':m';
    const { meter } = meterWith(counters);

    const grant = await meter.consume('usr_1', 'free', 'shield_inspections');

    expect(grant.burst).toEqual({ limit: 2, remaining: 2, resetSeconds: 7 });
  });

  describe('which windows are asked at once', () => {
    /** The ids asked before any answer came back, for each consume. */
    async function askedAtOnce(meter: Meter, counters: MapCounters): Promise<number> {
      let asked = 0;
      const real = counters.tryIncrement.bind(counters);
      counters.tryIncrement = (id, limit) => {
        asked++;
        return new Promise((done) => setImmediate(() => done(real(id, limit))));
      };
      const granted = meter.consume('usr_1', 'pro', 'shield_inspections').catch((e: unknown) => e);
      await Promise.resolve();
      const before = asked;
      await granted;
      return before;
    }

    it('when the month and day are far from their limits, then they are asked with the burst, and a burst refusal gives their places back', async () => {
      const { meter, counters } = meterWith();

      expect(await askedAtOnce(meter, counters)).toBe(1); // nothing known yet: one at a time
      expect(await askedAtOnce(meter, counters)).toBe(3);
      const refused = await refusal(meter.consume('usr_1', 'pro', 'shield_inspections'));

      expect(refused.kind).toBe('rate_limited');
      const counts = [...counters.counts.entries()].map(([id, n]) => `${id.split(':')[2]} ${n}`);
      expect(counts).toEqual(['minute 2', 'month 2', 'day 2']);
    });

    it('when a window is near its limit, then the windows are asked one at a time', async () => {
      const { meter, counters } = meterWith();
      counters.counts.set('usr_1:shield_inspections:day:2026-03-14', 950);

      expect(await askedAtOnce(meter, counters)).toBe(1);
      expect(await askedAtOnce(meter, counters)).toBe(1);
    });
  });
});
