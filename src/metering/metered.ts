import type { RequestHandler } from 'express';
import { callerAccountId } from '../auth/caller';
import type { BurstWindow, Meter } from './meter';
import type { PlanLookup } from './plan-lookup';
import type { MeteredAction } from './plan-limits';

/** The burst window as the standard rate-limit headers say it. */
function rateLimitHeaders({ limit, remaining, resetSeconds }: BurstWindow) {
  return {
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(remaining),
    'RateLimit-Reset': String(resetSeconds),
  };
}

/**
 * Route middleware for an action that creates something metered. Put it after authentication,
 * the ownership check and body validation, so refused or invalid requests spend nothing; an action
 * that then fails (an error status) gets its quota back.
 */
export function metered(meter: Meter, plans: PlanLookup, action: MeteredAction): RequestHandler {
  return async (_req, res, next) => {
    const accountId = callerAccountId(res);
    const grant = await meter.consume(accountId, await plans.planOf(accountId), action);
    res.set(rateLimitHeaders(grant.burst));
    res.once('finish', () => {
      if (res.statusCode >= 400) void grant.refund();
    });
    next();
  };
}
