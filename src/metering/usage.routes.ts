import { Router } from 'express';
import { z } from 'zod';
import { sessionOf } from '../http/session-auth';
import { PLAN_DISPLAY_NAMES, PLAN_IDS } from '../plans';
import { usageRowView, type Meter } from './meter';
import type { PlanLookup } from './metered';

export const usageView = z.object({
  plan: z.enum(PLAN_IDS),
  plan_display_name: z.string(),
  metrics: z.array(usageRowView),
});

/** `GET /api/usage` (session): per metric, used, limit and reset date. */
export function usageRoutes(meter: Meter, plans: PlanLookup): Router {
  const router = Router();
  router.get('/', async (_req, res) => {
    const accountId = sessionOf(res).userId;
    const plan = await plans.planOf(accountId);
    res.json({
      plan,
      plan_display_name: PLAN_DISPLAY_NAMES[plan],
      metrics: await meter.usage(accountId, plan),
    } satisfies z.output<typeof usageView>);
  });
  return router;
}
