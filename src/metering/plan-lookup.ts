import { LRUCache } from 'lru-cache';
import type { UsersRepository } from '../accounts/users.repository';
import { DomainError } from '../errors';
import type { PlanId } from '../plans';

/** A plan change reaches metering within this long; a plan is not a secret to revoke at once. */
const PLAN_CACHE_MS = 30_000;

/** The plan an account is on, as metering reads it (briefly cached). */
export class PlanLookup {
  private readonly cache = new LRUCache<string, PlanId>({ max: 10_000, ttl: PLAN_CACHE_MS });

  constructor(private readonly users: UsersRepository) {}

  async planOf(accountId: string): Promise<PlanId> {
    const cached = this.cache.get(accountId);
    if (cached) return cached;
    const user = await this.users.findById(accountId);
    if (!user) {
      throw new DomainError('unauthenticated', 'The account of this credential no longer exists');
    }
    this.cache.set(accountId, user.plan);
    return user.plan;
  }
}
