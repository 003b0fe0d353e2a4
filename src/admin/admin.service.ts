import type { SessionsRepository } from '../accounts/sessions.repository';
import type { User, UsersRepository } from '../accounts/users.repository';
import type { Clock } from '../clock';
import { DomainError } from '../errors';
import type { EvidenceStore } from '../evidence/evidence.store';
import { newTimeOrderedId } from '../ids';
import type { ApiKeysRepository } from '../keys/api-keys.repository';
import type { Meter, UsageRow } from '../metering/meter';
import type { PlanId } from '../plans';

export const ADMIN_ACTIONS = [
  'plan_changed',
  'account_disabled',
  'account_enabled',
  'sessions_revoked',
] as const;
export type AdminAction = (typeof ADMIN_ACTIONS)[number];

export interface AdminServiceDeps {
  users: UsersRepository;
  sessions: SessionsRepository;
  keys: ApiKeysRepository;
  meter: Meter;
  store: EvidenceStore;
  clock: Clock;
}

/** The operator acting: their account, and the session or key they acted with. */
export interface Operator {
  accountId: string;
  via: { type: 'session' | 'api_key'; id: string };
}

/**
 * What operators do to accounts. Every change is sealed, before the answer, as an
 * `audit.admin.<action>` record in the evidence log of the account acted on, naming the operator
 * (account, email, and the session or key), so the tenant and any verifier can see who did what.
 */
export class AdminService {
  constructor(private readonly deps: AdminServiceDeps) {}

  search(prefix: string, after: string | undefined, limit: number): Promise<User[]> {
    return this.deps.users.search(prefix.toLowerCase(), after, limit);
  }

  async account(id: string): Promise<{ user: User; usage: UsageRow[] }> {
    const user = await this.found(id);
    return { user, usage: await this.deps.meter.usage(user.id, user.plan) };
  }

  async setPlan(operator: Operator, id: string, plan: PlanId): Promise<User> {
    const before = await this.found(id);
    const user = await this.changed(this.deps.users.setPlan(id, plan, this.deps.clock()), id);
    await this.seal(operator, user, 'plan_changed', { from: before.plan, to: plan });
    return user;
  }

  /** No sign-in, every session ended, every key suspended; `enable` gives the keys back. */
  async disable(operator: Operator, id: string): Promise<User> {
    const now = this.deps.clock();
    const user = await this.changed(this.deps.users.setDisabled(id, now, now), id);
    const sessions = await this.deps.sessions.deleteAllOf(id);
    const keys = await this.deps.keys.suspendAll(id, now);
    await this.seal(operator, user, 'account_disabled', {
      sessions_ended: sessions,
      keys_suspended: keys,
    });
    return user;
  }

  async enable(operator: Operator, id: string): Promise<User> {
    const user = await this.changed(this.deps.users.setDisabled(id, null, this.deps.clock()), id);
    const keys = await this.deps.keys.suspendAll(id, null);
    await this.seal(operator, user, 'account_enabled', { keys_resumed: keys });
    return user;
  }

  async revokeSessions(operator: Operator, id: string): Promise<number> {
    const user = await this.found(id);
    const ended = await this.deps.sessions.deleteAllOf(id);
    await this.seal(operator, user, 'sessions_revoked', { sessions_ended: ended });
    return ended;
  }

  private async found(id: string): Promise<User> {
    return this.changed(this.deps.users.findById(id), id);
  }

  private async changed(update: Promise<User | null>, id: string): Promise<User> {
    const user = await update;
    if (!user) throw new DomainError('not_found', `No account ${id}`);
    return user;
  }

  private async seal(
    operator: Operator,
    account: User,
    action: AdminAction,
    details: Record<string, unknown>,
  ): Promise<void> {
    const who = await this.deps.users.findById(operator.accountId);
    await this.deps.store.append(account.id, {
      logId: newTimeOrderedId('evd'),
      kind: `audit.admin.${action}`,
      data: {
        at: this.deps.clock().toISOString(),
        operator: {
          account_id: operator.accountId,
          email: who?.email ?? null,
          via: operator.via,
        },
        account_id: account.id,
        ...details,
      },
    });
  }
}
