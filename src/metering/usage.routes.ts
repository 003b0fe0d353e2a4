import { z } from 'zod';
import { operationsFor } from '../http/operation';
import { sessionOf } from '../auth/session-auth';
import { PLAN_DISPLAY_NAMES, PLAN_IDS } from '../plans';
import { usageRowView, type Meter } from './meter';
import type { PlanLookup } from './plan-lookup';

export const usageView = z
  .object({
    plan: z.enum(PLAN_IDS),
    plan_display_name: z.string(),
    metrics: z.array(usageRowView),
  })
  .meta({ id: 'Usage' });

export interface UsageDeps {
  meter: Meter;
  plans: PlanLookup;
}
const operation = operationsFor<UsageDeps>('Accounts');

/** `GET /api/usage` (session): per metric, used, limit and reset date. */
export const usageOperations = [
  operation({
    operationId: 'getUsage',
    method: 'get',
    path: '/api/usage',
    summary: 'Usage per metered action',
    auth: 'session',
    success: { status: 200, description: '`{plan, plan_display_name, metrics}`' },
    response: usageView,
    handler: async ({ res }, { meter, plans }) => {
      const accountId = sessionOf(res).userId;
      const plan = await plans.planOf(accountId);
      return {
        plan,
        plan_display_name: PLAN_DISPLAY_NAMES[plan],
        metrics: await meter.usage(accountId, plan),
      };
    },
  }),
];
