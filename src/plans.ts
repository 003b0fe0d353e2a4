export const PLAN_IDS = ['free', 'pro', 'enterprise'] as const;

export type PlanId = (typeof PLAN_IDS)[number];

export const DEFAULT_PLAN: PlanId = 'free';
