import { z } from 'zod';
import type { Clock } from '../clock';
import { DomainError } from '../errors';
import { meterRefusals } from '../metrics';
import type { Logger } from '../logger';
import { PLAN_DISPLAY_NAMES, type PlanId } from '../plans';
import type { CounterStore, WindowCounts, WindowKeys } from './counters.repository';
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
  /** Where a 402 sends the user to change plan (UPGRADE_URL). */
  upgradeUrl: string;
  clock: Clock;
  log: Logger;
}

/** The UTC windows `now` falls in. */
const windowsAt = (now: Date) => ({
  month: monthWindow(now),
  day: dayWindow(now),
  minute: minuteWindow(now),
});

/** How every counter of one account begins (an erasure deletes them by it). */
export const counterKeyPrefix = (accountId: string) => `${accountId}:`;

/** Where one account's action is counted in those windows. */
function keysOf(
  accountId: string,
  action: MeteredAction,
  { month, day, minute }: ReturnType<typeof windowsAt>,
): WindowKeys {
  const counter = `${counterKeyPrefix(accountId)}${action}`;
  return { counter, month: month.key, day: day.key, minute: minute.key };
}

/**
 * Three windows bound each metered action: the per-minute burst (429), the monthly quota (402)
 * and the daily allowance (402). One atomic update takes a place in all three or in none, so a
 * refused request spends nothing; it is refused by the first full window in that order. When the
 * counter store fails, nothing can be counted and the daily allowance fails closed (503); the
 * burst and monthly windows, which alone would let the request through, are in the same document.
 */
export class Meter {
  constructor(private readonly deps: MeterDeps) {}

  async consume(accountId: string, plan: PlanId, action: MeteredAction): Promise<MeterGrant> {
    const { counters, clock, log } = this.deps;
    const limits = this.deps.limits[plan][action];
    const now = clock();
    const at = windowsAt(now);
    const windows = keysOf(accountId, action, at);
    const retryAfter = Math.max(
      1,
      Math.ceil((at.minute.resetsAt.getTime() - now.getTime()) / 1000),
    );
    /** Counted, for the caller to throw. */
    const refused = (error: DomainError): DomainError => {
      meterRefusals.inc({ action, error: error.message });
      return error;
    };

    const admission = await counters.take(windows, limits).catch((err: unknown) => {
      log.warn({ err }, 'meter store failed');
      throw refused(
        new DomainError('unavailable', {
          error: 'daily_quota_unavailable',
          message: 'The daily allowance cannot be checked right now: retry shortly',
        }),
      );
    });
    const { counts } = admission;
    if (!admission.admitted) {
      const full = fullestWindow(counts, limits);
      if (full === 'minute') {
        throw refused(
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
      throw refused(
        full === 'month'
          ? this.limitReached(plan, `${action}_per_month`, limits.perMonth, at.month, {
              used: counts.month,
            })
          : this.limitReached(plan, `${action}_per_day`, limits.perDay, at.day, {}),
      );
    }

    return {
      refund: () =>
        counters
          .giveBack(windows)
          .catch((err: unknown) => log.error({ err, windows }, 'meter refund failed')),
      burst: {
        limit: limits.burstPerMinute,
        remaining: Math.max(0, limits.burstPerMinute - counts.minute),
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
      upgrade_url: this.deps.upgradeUrl,
      resets_at: utcDate(window.resetsAt),
    });
  }

  /** Per action and horizon: used, limit and when the window resets. */
  async usage(accountId: string, plan: PlanId): Promise<UsageRow[]> {
    const at = windowsAt(this.deps.clock());
    const { month, day } = at;
    const actions = Object.entries(this.deps.limits[plan]) as [MeteredAction, ActionLimits][];
    const counts = await this.deps.counters.read(
      actions.map(([action]) => keysOf(accountId, action, at)),
    );
    return actions.flatMap(([action, limits], i) => [
      {
        metric: `${action}_per_month`,
        used: counts[i]!.month,
        limit: limits.perMonth,
        resets_at: utcDate(month.resetsAt),
      },
      {
        metric: `${action}_per_day`,
        used: counts[i]!.day,
        limit: limits.perDay,
        resets_at: utcDate(day.resetsAt),
      },
    ]);
  }
}

/** The window that refused: the first full one in the spec's order (the tightest in a race). */
function fullestWindow(counts: WindowCounts, limits: ActionLimits): keyof WindowCounts {
  const room = {
    minute: limits.burstPerMinute - counts.minute,
    month: limits.perMonth - counts.month,
    day: limits.perDay - counts.day,
  };
  const order = ['minute', 'month', 'day'] as const;
  return order.find((w) => room[w] <= 0) ?? order.reduce((a, b) => (room[b] < room[a] ? b : a));
}
