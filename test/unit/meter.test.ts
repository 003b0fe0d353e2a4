import pino from 'pino';
import { DomainError } from '../../src/errors';
import type {
  Admission,
  CounterStore,
  WindowCounts,
  WindowKeys,
} from '../../src/metering/counters.repository';
import { Meter } from '../../src/metering/meter';
import { PLAN_LIMITS, type ActionLimits, type PlanLimits } from '../../src/metering/plan-limits';

/** Counters in a map, like the real store: a place in all three windows or in none. */
class MapCounters implements CounterStore {
  readonly counts = new Map<string, number>();
  failing = false;

  private keys({ counter, month, day, minute }: WindowKeys) {
    return {
      minute: `${counter} ${minute}`,
      day: `${counter} ${day}`,
      month: `${counter} ${month}`,
    };
  }

  private countsAt(windows: WindowKeys): WindowCounts {
    const keys = this.keys(windows);
    const at = (key: string) => this.counts.get(key) ?? 0;
    return { minute: at(keys.minute), day: at(keys.day), month: at(keys.month) };
  }

  private add(windows: WindowKeys, by: number) {
    for (const key of Object.values(this.keys(windows))) {
      this.counts.set(key, (this.counts.get(key) ?? 0) + by);
    }
  }

  take(windows: WindowKeys, limits: ActionLimits): Promise<Admission> {
    if (this.failing) return Promise.reject(new Error('store down'));
    const c = this.countsAt(windows);
    const fits =
      c.minute < limits.burstPerMinute && c.day < limits.perDay && c.month < limits.perMonth;
    if (fits) this.add(windows, 1);
    return Promise.resolve({ admitted: fits, counts: this.countsAt(windows) });
  }
  giveBack(windows: WindowKeys): Promise<void> {
    this.add(windows, -1);
    return Promise.resolve();
  }
  read(windows: WindowKeys[]): Promise<WindowCounts[]> {
    return Promise.resolve(windows.map((w) => this.countsAt(w)));
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
  const meter = new Meter({
    counters,
    limits,
    upgradeUrl: '/console/#/account',
    clock: () => now,
    log: pino({ level: 'silent' }),
  });
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

  it('when the month is spent, then it refuses with quota_exceeded and holds no place in any window', async () => {
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

  it('when the counter store fails, then it fails closed with unavailable and spends nothing', async () => {
    const counters = new MapCounters();
    counters.failing = true;
    const { meter } = meterWith(counters);

    const err = await refusal(meter.consume('usr_1', 'free', 'shield_inspections'));

    expect(err.kind).toBe('unavailable');
    expect(err.detail).toMatchObject({ error: 'daily_quota_unavailable' });
    expect(spent(counters)).toBe(0);
  });

  it('when a granted request is refunded, then its place comes back in every window', async () => {
    const { meter, counters } = meterWith();
    await meter.consume('usr_1', 'pro', 'shield_inspections');
    const grant = await meter.consume('usr_1', 'pro', 'shield_inspections');
    expect(grant.burst.remaining).toBe(0);

    await grant.refund();

    expect(await meter.usage('usr_1', 'pro')).toEqual(
      expect.arrayContaining([
        { metric: 'shield_inspections_per_month', used: 1, limit: 10_000, resets_at: '2026-04-01' },
        { metric: 'shield_inspections_per_day', used: 1, limit: 1_000, resets_at: '2026-03-15' },
      ]),
    );
    expect((await meter.consume('usr_1', 'pro', 'shield_inspections')).burst.remaining).toBe(0);
    expect(spent(counters)).toBe(6);
  });
});
