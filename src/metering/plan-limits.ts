import type { PlanId } from '../plans';

/** Metered actions: each creates something. Alerts from what already exists are never metered. */
export const METERED_ACTIONS = ['shield_inspections', 'canary_plants'] as const;

export type MeteredAction = (typeof METERED_ACTIONS)[number];

export interface ActionLimits {
  perMonth: number;
  perDay: number;
  burstPerMinute: number;
}

/**
 * The one plan table (mirrored in docs/api.md). Changing a number is a one-line edit. A month or a
 * day is a UTC calendar month or day; the burst window is the current UTC minute.
 */
export const PLAN_LIMITS: Record<PlanId, Record<MeteredAction, ActionLimits>> = {
  free: {
    shield_inspections: { perMonth: 10, perDay: 10, burstPerMinute: 10 },
    canary_plants: { perMonth: 10, perDay: 10, burstPerMinute: 30 },
  },
  pro: {
    shield_inspections: { perMonth: 10_000, perDay: 1_000, burstPerMinute: 120 },
    canary_plants: { perMonth: 1_000, perDay: 200, burstPerMinute: 60 },
  },
  enterprise: {
    shield_inspections: { perMonth: 1_000_000, perDay: 100_000, burstPerMinute: 1_200 },
    canary_plants: { perMonth: 100_000, perDay: 10_000, burstPerMinute: 600 },
  },
};

export type PlanLimits = typeof PLAN_LIMITS;
