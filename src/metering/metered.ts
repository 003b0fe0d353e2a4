import type { RequestHandler } from 'express';
import { LRUCache } from 'lru-cache';
import type { UsersRepository } from '../accounts/users.repository';
import { callerAccountId } from '../auth/caller';
import { AppError } from '../http/errors';
import type { PlanId } from '../plans';
import type { Meter } from './meter';
import type { MeteredAction } from './plan-limits';

/** A plan change reaches metering within this long; a plan is not a secret to revoke at once. */
const PLAN_CACHE_MS = 30_000;

export class PlanLookup {
  private readonly cache = new LRUCache<string, PlanId>({ max: 10_000, ttl: PLAN_CACHE_MS });

  constructor(private readonly users: UsersRepository) {}

  async planOf(accountId: string): Promise<PlanId> {
    const cached = this.cache.get(accountId);
    if (cached) return cached;
    const user = await this.users.findById(accountId);
    if (!user) throw new AppError(401, 'The account of this credential no longer exists');
    this.cache.set(accountId, user.plan);
    return user.plan;
  }
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
    res.set(grant.headers);
    res.once('finish', () => {
      if (res.statusCode >= 400) void grant.refund();
    });
    next();
  };
}
