import { Router } from 'express';
import { sessionOf } from '../http/session-auth';
import { PLAN_DISPLAY_NAMES } from '../plans';
import type { Meter } from './meter';
import type { PlanLookup } from './metered';

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
    });
  });
  return router;
}
