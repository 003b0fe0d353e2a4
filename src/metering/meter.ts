import type { Clock } from '../clock';
import { AppError } from '../http/errors';
import type { Logger } from '../logger';
import { PLAN_DISPLAY_NAMES, UPGRADE_URL, type PlanId } from '../plans';
import type { CounterStore } from './counters.repository';
import type { ActionLimits, MeteredAction, PlanLimits } from './plan-limits';
import { dayWindow, minuteWindow, monthWindow, utcDate, type Window } from './windows';

export interface MeterGrant {
  /** Gives back what was spent: for a request that then failed. */
  refund(): Promise<void>;
  /** Standard rate-limit headers for the burst window. */
  headers: Record<string, string>;
}

export interface UsageRow {
  metric: string;
  used: number;
  limit: number;
  resets_at: string;
}

interface MeterDeps {
  counters: CounterStore;
  limits: PlanLimits;
  clock: Clock;
  log: Logger;
}

const counterId = (accountId: string, action: MeteredAction, horizon: string, window: Window) =>
  `${accountId}:${action}:${horizon}:${window.key}`;

/**
 * Three horizons bound each metered action, checked in this order: the per-minute burst (429),
 * the monthly quota (402), the daily allowance (402). A refused request spends nothing: what the
 * earlier checks took is given back. When the counter store fails, burst and monthly checks let
 * the request through (logged); the daily allowance fails closed (503).
 */
export class Meter {
  constructor(private readonly deps: MeterDeps) {}

  async consume(accountId: string, plan: PlanId, action: MeteredAction): Promise<MeterGrant> {
    const { counters, clock, log } = this.deps;
    const limits = this.deps.limits[plan][action];
    const now = clock();
    const [minute, month, day] = [minuteWindow(now), monthWindow(now), dayWindow(now)];
    const spent: string[] = [];
    const refund = async () => {
      await Promise.all(spent.map((id) => counters.decrement(id))).catch((err: unknown) =>
        log.error({ err, spent }, 'meter refund failed'),
      );
    };
    const take = async (id: string, limit: number, failOpen: boolean) => {
      try {
        const count = await counters.tryIncrement(id, limit);
        if (count !== null) spent.push(id);
        return count;
      } catch (err) {
        if (!failOpen) throw err;
        log.warn({ err, id }, 'meter store failed: letting the request through');
        return 0;
      }
    };

    const burstId = counterId(accountId, action, 'minute', minute);
    const burstCount = await take(burstId, limits.burstPerMinute, true);
    const retryAfter = Math.max(1, Math.ceil((minute.resetsAt.getTime() - now.getTime()) / 1000));
    if (burstCount === null) {
      throw new AppError(
        429,
        {
          error: 'burst_limit_exceeded',
          message: `At most ${limits.burstPerMinute} ${action} a minute on the ${PLAN_DISPLAY_NAMES[plan]} plan`,
          limit: limits.burstPerMinute,
          retry_after_seconds: retryAfter,
        },
        { 'Retry-After': String(retryAfter) },
      );
    }

    const monthId = counterId(accountId, action, 'month', month);
    if ((await take(monthId, limits.perMonth, true)) === null) {
      await refund();
      const used = await counters.read(monthId).catch(() => limits.perMonth);
      throw this.limitReached(plan, `${action}_per_month`, limits.perMonth, month, { used });
    }

    let dayCount: number | null;
    try {
      dayCount = await take(counterId(accountId, action, 'day', day), limits.perDay, false);
    } catch (err) {
      await refund();
      log.error({ err }, 'daily allowance cannot be checked: refusing');
      throw new AppError(503, {
        error: 'daily_quota_unavailable',
        message: 'The daily allowance cannot be checked right now: retry shortly',
      });
    }
    if (dayCount === null) {
      await refund();
      throw this.limitReached(plan, `${action}_per_day`, limits.perDay, day, {});
    }

    return {
      refund,
      headers: {
        'RateLimit-Limit': String(limits.burstPerMinute),
        'RateLimit-Remaining': String(Math.max(0, limits.burstPerMinute - burstCount)),
        'RateLimit-Reset': String(retryAfter),
      },
    };
  }

  private limitReached(plan: PlanId, metric: string, limit: number, window: Window, extra: object) {
    return new AppError(402, {
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
