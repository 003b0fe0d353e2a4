import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import type { Clock } from '../clock';
import { DomainError } from '../errors';
import { meterRefusals } from '../metrics';
import type { Logger } from '../logger';
import { PLAN_DISPLAY_NAMES, UPGRADE_URL, type PlanId } from '../plans';
import type { CounterStore } from './counters.repository';
import type { ActionLimits, MeteredAction, PlanLimits } from './plan-limits';
import { dayWindow, minuteWindow, monthWindow, utcDate, type Window } from './windows';

/** Where the burst window stands after a granted request. */
export interface BurstWindow {
  limit: number;
  remaining: number;
  /** Until the window starts again (at least 1). */
  resetSeconds: number;
}

export interface MeterGrant {
  /** Gives back what was spent: for a request that then failed. */
  refund(): Promise<void>;
  burst: BurstWindow;
}

/** One metered action over one window: `<action>_per_month` or `<action>_per_day`. */
export const usageRowView = z.object({
  metric: z.string(),
  used: z.number().int(),
  limit: z.number().int(),
  /** The UTC date the window starts again. */
  resets_at: z.iso.date(),
});
export type UsageRow = z.output<typeof usageRowView>;

interface MeterDeps {
  counters: CounterStore;
  limits: PlanLimits;
  clock: Clock;
  log: Logger;
}

const counterId = (accountId: string, action: MeteredAction, horizon: string, window: Window) =>
  `${accountId}:${action}:${horizon}:${window.key}`;

/**
 * How far below its limit a window's last known count must be for it to be asked together with
 * the burst: the larger of a tenth of the limit and 100 places, more than the requests in flight
 * on all replicas can take before the count is seen again.
 */
const roomToAskAtOnce = (limit: number) => Math.max(limit / 10, 100);

/**
 * Three horizons bound each metered action, checked in this order: the per-minute burst (429),
 * the monthly quota (402), the daily allowance (402). A refused request spends nothing: what the
 * earlier checks took is given back. When the counter store fails, burst and monthly checks let
 * the request through (logged); the daily allowance fails closed (503).
 */
export class Meter {
  /** The count each counter last answered with (the window's key is in the id). */
  private readonly lastCounts = new LRUCache<string, number>({ max: 10_000 });

  constructor(private readonly deps: MeterDeps) {}

  /** Known to be far enough from its limit that no request in flight could be refused by it. */
  private roomy(id: string, limit: number): boolean {
    const last = this.lastCounts.get(id);
    return last !== undefined && last <= limit - roomToAskAtOnce(limit);
  }

  async consume(accountId: string, plan: PlanId, action: MeteredAction): Promise<MeterGrant> {
    const { counters, clock, log } = this.deps;
    const limits = this.deps.limits[plan][action];
    const now = clock();
    const [minute, month, day] = [minuteWindow(now), monthWindow(now), dayWindow(now)];
    const ids = {
      burst: counterId(accountId, action, 'minute', minute),
      month: counterId(accountId, action, 'month', month),
      day: counterId(accountId, action, 'day', day),
    };
    const spent: string[] = [];
    const refund = async () => {
      await Promise.all(spent.map((id) => counters.decrement(id))).catch((err: unknown) =>
        log.error({ err, spent }, 'meter refund failed'),
      );
    };
    /** The new count, null when the window is full, or 'failed' when the store failed. */
    const ask = async (id: string, limit: number) => {
      try {
        const count = await counters.tryIncrement(id, limit);
        if (count !== null) spent.push(id);
        this.lastCounts.set(id, count ?? limit);
        return count;
      } catch (err) {
        log.warn({ err }, 'meter store failed');
        return 'failed' as const;
      }
    };
    const refuse = async (error: DomainError): Promise<never> => {
      meterRefusals.inc({ action, error: error.message });
      await refund();
      throw error;
    };

    // Burst and monthly meters that fail let the request through; the daily allowance fails closed.
    const retryAfter = Math.max(1, Math.ceil((minute.resetsAt.getTime() - now.getTime()) / 1000));
    // One window at a time, in the spec's order: a request refused by one window never holds a
    // place in the next. Asked at once near their limits, each window could admit a different set
    // of parallel requests (on several replicas), and after the refunds far fewer than the limit
    // would pass. Far from their limits the month and day cannot refuse anyone in flight, so they
    // are asked with the burst (two round trips fewer) and a burst refusal gives their places back.
    const atOnce = this.roomy(ids.month, limits.perMonth) && this.roomy(ids.day, limits.perDay);
    const monthAsked = atOnce ? ask(ids.month, limits.perMonth) : undefined;
    const dayAsked = atOnce ? ask(ids.day, limits.perDay) : undefined;
    const burstCount = await ask(ids.burst, limits.burstPerMinute);
    if (burstCount === null) {
      await Promise.all([monthAsked, dayAsked]); // what they took is refunded with the refusal
      await refuse(
        new DomainError(
          'rate_limited',
          {
            error: 'burst_limit_exceeded',
            message: `At most ${limits.burstPerMinute} ${action} a minute on the ${PLAN_DISPLAY_NAMES[plan]} plan`,
            limit: limits.burstPerMinute,
            retry_after_seconds: retryAfter,
          },
          retryAfter,
        ),
      );
    }
    const monthCount = await (monthAsked ?? ask(ids.month, limits.perMonth));
    if (monthCount === null) {
      const used = await counters.read(ids.month).catch(() => limits.perMonth);
      await dayAsked;
      await refuse(
        this.limitReached(plan, `${action}_per_month`, limits.perMonth, month, { used }),
      );
    }
    const dayCount = await (dayAsked ?? ask(ids.day, limits.perDay));
    if (dayCount === 'failed') {
      await refuse(
        new DomainError('unavailable', {
          error: 'daily_quota_unavailable',
          message: 'The daily allowance cannot be checked right now: retry shortly',
        }),
      );
    }
    if (dayCount === null) {
      await refuse(this.limitReached(plan, `${action}_per_day`, limits.perDay, day, {}));
    }
    const remaining =
      typeof burstCount === 'number' ? limits.burstPerMinute - burstCount : limits.burstPerMinute;

    return {
      refund,
      burst: {
        limit: limits.burstPerMinute,
        remaining: Math.max(0, remaining),
        resetSeconds: retryAfter,
      },
    };
  }

  private limitReached(plan: PlanId, metric: string, limit: number, window: Window, extra: object) {
    return new DomainError('quota_exceeded', {
      error: 'plan_limit_exceeded',
      metric,
      plan,
      plan_display_name: PLAN_DISPLAY_NAMES[plan],
      limit,
      ...extra,
      message: `The ${PLAN_DISPLAY_NAMES[plan]} plan allows ${limit} ${metric.replace(/_/g, ' ')}; it resets on ${utcDate(window.resetsAt)}.`,
      upgrade_url: UPGRADE_URL,
      resets_at: utcDate(window.resetsAt),
    });
  }

  /** Per action and horizon: used, limit and when the window resets. */
  async usage(accountId: string, plan: PlanId): Promise<UsageRow[]> {
    const now = this.deps.clock();
    const rows: Promise<UsageRow>[] = [];
    const actions = Object.entries(this.deps.limits[plan]) as [MeteredAction, ActionLimits][];
    for (const [action, limits] of actions) {
      for (const [horizon, window, limit] of [
        ['month', monthWindow(now), limits.perMonth],
        ['day', dayWindow(now), limits.perDay],
      ] as const) {
        rows.push(
          this.deps.counters.read(counterId(accountId, action, horizon, window)).then((used) => ({
            metric: `${action}_per_${horizon}`,
            used,
            limit,
            resets_at: utcDate(window.resetsAt),
          })),
        );
      }
    }
    return Promise.all(rows);
  }
}
