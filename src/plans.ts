import { readFileSync } from 'node:fs';
import { z } from 'zod';
import {
  METERED_ACTIONS,
  PLAN_LIMITS,
  type ActionLimits,
  type MeteredAction,
  type PlanLimits,
} from './metering/plan-limits';

export const PLAN_IDS = ['free', 'pro', 'enterprise'] as const;

export type PlanId = (typeof PLAN_IDS)[number];

export const PLAN_DISPLAY_NAMES: Record<PlanId, string> = {
  free: 'Free',
  pro: 'Pro',
  enterprise: 'Enterprise',
};

/** Site-relative: the console page that shows an account's plan and what it has used. */
export const CONSOLE_PLAN_PAGE = '/console/#/account';

/** Features that a plan has or has not, rather than counts of something. */
export const PLAN_FEATURES = ['legal_pdf_export'] as const;

export type PlanFeature = (typeof PLAN_FEATURES)[number];

/**
 * What each plan allows, which plan a new account gets, and where a refusal sends the user: the
 * spec's table (SPEC_PLANS) unless the operator's PLANS_FILE, DEFAULT_PLAN and UPGRADE_URL say
 * otherwise.
 */
export interface Plans {
  defaultPlan: PlanId;
  upgradeUrl: string;
  limits: PlanLimits;
  features: Record<PlanFeature, readonly PlanId[]>;
}

export const SPEC_PLANS: Plans = {
  defaultPlan: 'free',
  upgradeUrl: CONSOLE_PLAN_PAGE,
  limits: PLAN_LIMITS,
  features: { legal_pdf_export: ['pro', 'enterprise'] },
};

const count = z.number().int().min(0).max(1e9);
const actionLimits = z.strictObject({
  perMonth: count,
  perDay: count,
  burstPerMinute: count.min(1),
}) satisfies z.ZodType<ActionLimits>;

/** One plan's entry in PLANS_FILE: what it names replaces the spec's value, the rest stays. */
const planOverride = z.strictObject({
  ...(Object.fromEntries(METERED_ACTIONS.map((a) => [a, actionLimits.optional()])) as Record<
    MeteredAction,
    z.ZodOptional<typeof actionLimits>
  >),
  ...(Object.fromEntries(PLAN_FEATURES.map((f) => [f, z.boolean().optional()])) as Record<
    PlanFeature,
    z.ZodOptional<z.ZodBoolean>
  >),
});
const plansFile = z.partialRecord(z.enum(PLAN_IDS), planOverride);

export type PlansFile = z.input<typeof plansFile>;

/**
 * The plans in force: SPEC_PLANS with the operator's file (JSON, `{"free": {"canary_plants":
 * {"perMonth": …, "perDay": …, "burstPerMinute": …}, "legal_pdf_export": true}}`) laid over it.
 * Throws naming the file and every bad entry, so a mistyped limit stops the start.
 */
export function loadPlans(settings: {
  file?: string;
  defaultPlan: PlanId;
  upgradeUrl: string;
}): Plans {
  const overrides = settings.file ? readPlansFile(settings.file) : {};
  const limits = Object.fromEntries(
    PLAN_IDS.map((plan) => [
      plan,
      Object.fromEntries(
        METERED_ACTIONS.map((a) => [a, overrides[plan]?.[a] ?? SPEC_PLANS.limits[plan][a]]),
      ),
    ]),
  ) as PlanLimits;
  const features = Object.fromEntries(
    PLAN_FEATURES.map((feature) => [
      feature,
      PLAN_IDS.filter(
        (plan) => overrides[plan]?.[feature] ?? SPEC_PLANS.features[feature].includes(plan),
      ),
    ]),
  ) as unknown as Plans['features'];
  return { defaultPlan: settings.defaultPlan, upgradeUrl: settings.upgradeUrl, limits, features };
}

function readPlansFile(file: string): z.output<typeof plansFile> {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`PLANS_FILE ${file}: ${(err as { message?: string }).message ?? String(err)}`);
  }
  const parsed = plansFile.safeParse(json);
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (i) => `${i.path.join('.') || 'top level'}: ${i.message}`,
    );
    throw new Error(`PLANS_FILE ${file}: ${lines.join('; ')}`);
  }
  return parsed.data;
}

export function planHasFeature(plans: Plans, plan: PlanId, feature: PlanFeature): boolean {
  return plans.features[feature].includes(plan);
}

/** The spec's structured 402 body (under `detail`) for a feature the plan does not include. */
export function featureNotInPlan(plans: Plans, plan: PlanId, feature: PlanFeature, what: string) {
  const having = plans.features[feature].map((p) => PLAN_DISPLAY_NAMES[p]);
  const where = having.length
    ? `part of the ${having.join(' and ')} plan${having.length > 1 ? 's' : ''}`
    : 'in no plan of this service';
  return {
    error: 'plan_limit_exceeded',
    metric: feature,
    plan,
    plan_display_name: PLAN_DISPLAY_NAMES[plan],
    limit: 0,
    message: `${what} is ${where}; the ${PLAN_DISPLAY_NAMES[plan]} plan does not include it.`,
    upgrade_url: plans.upgradeUrl,
  };
}
