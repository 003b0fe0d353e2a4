export const PLAN_IDS = ['free', 'pro', 'enterprise'] as const;

export type PlanId = (typeof PLAN_IDS)[number];

export const DEFAULT_PLAN: PlanId = 'free';

export const PLAN_DISPLAY_NAMES: Record<PlanId, string> = {
  free: 'Free',
  pro: 'Pro',
  enterprise: 'Enterprise',
};

/** Site-relative: the console page where an account changes plan. */
export const UPGRADE_URL = '/settings/billing';

/** Features that a plan has or has not, rather than counts of something. */
export const PLAN_FEATURES = {
  legal_pdf_export: ['pro', 'enterprise'],
} as const satisfies Record<string, readonly PlanId[]>;

export type PlanFeature = keyof typeof PLAN_FEATURES;

export function planHasFeature(plan: PlanId, feature: PlanFeature): boolean {
  return (PLAN_FEATURES[feature] as readonly PlanId[]).includes(plan);
}

/** The spec's structured 402 body (under `detail`) for a feature the plan does not include. */
export function featureNotInPlan(plan: PlanId, feature: PlanFeature, what: string) {
  const plans = PLAN_FEATURES[feature].map((p) => PLAN_DISPLAY_NAMES[p]).join(' and ');
  return {
    error: 'plan_limit_exceeded',
    metric: feature,
    plan,
    plan_display_name: PLAN_DISPLAY_NAMES[plan],
    limit: 0,
    message: `${what} is part of the ${plans} plans; the ${PLAN_DISPLAY_NAMES[plan]} plan does not include it.`,
    upgrade_url: UPGRADE_URL,
  };
}
