import { adminScopes } from '../admin/operators';
import type { SessionPrincipal } from '../accounts/auth.service';
import type { AuditTrail } from '../evidence/trail/audit-trail';
import type { Clock } from '../clock';
import { DomainError } from '../errors';
import type { ApiKeyPrincipal } from '../auth/caller';
import { generateApiKey, parseApiKey, secretMatches } from './api-key-format';
import { MAX_ACTIVE_KEYS, type ApiKey, type ApiKeysRepository } from './api-keys.repository';
import { FreshReads } from './fresh-reads';
import { normaliseScopes } from './scopes';

/** `last used` is written at most this often per key and replica. */
const LAST_USED_RESOLUTION_MS = 60_000;
/** Bounds the memory of recent writes; forgetting only costs an extra write. */
const LAST_USED_MEMORY = 10_000;

interface ApiKeysServiceDeps {
  keys: ApiKeysRepository;
  audit: AuditTrail;
  clock: Clock;
  /** Whether the account is an operator: only operators' keys may hold `admin` scopes. */
  isOperator(accountId: string): Promise<boolean>;
}

export class ApiKeysService {
  private readonly lastUsedWrites = new Map<string, number>();
  private readonly lookups: FreshReads<ApiKey | null>;

  constructor(private readonly deps: ApiKeysServiceDeps) {
    this.lookups = new FreshReads((keyId) => deps.keys.findForAuthentication(keyId));
  }

  async create(
    session: SessionPrincipal,
    request: { name?: string; scopes?: string[] },
  ): Promise<{ key: ApiKey; value: string }> {
    const { keys, audit, clock } = this.deps;
    const scopes = normaliseScopes(request.scopes);
    const admin = adminScopes(scopes);
    if (admin.length > 0 && !(await this.deps.isOperator(session.userId))) {
      throw new DomainError(
        'forbidden',
        `Only operator accounts may hold admin scopes: ${admin.join(', ')}`,
      );
    }
    const now = clock();
    const generated = generateApiKey();
    const slot = await this.claimSlot(session.userId, generated.keyId, now);
    const key: ApiKey = {
      id: generated.keyId,
      accountId: session.userId,
      name: request.name ?? 'API key',
      prefix: generated.prefix,
      secretHash: generated.secretHash,
      scopes,
      slot,
      createdAt: now,
      lastUsedAt: null,
      revokedAt: null,
    };
    try {
      await keys.insert(key);
    } catch (err) {
      await keys.releaseSlot(key.accountId, slot, key.id);
      throw err;
    }
    await audit.record({
      accountId: key.accountId,
      at: now,
      action: 'api_key.created',
      actor: { type: 'session', id: session.sessionId },
      keyId: key.id,
    });
    return { key, value: generated.value };
  }

  private async claimSlot(accountId: string, keyId: string, now: Date): Promise<number> {
    const { keys } = this.deps;
    let slot = await keys.claimSlot(accountId, keyId, now);
    if (slot === null && (await keys.releaseAbandonedSlots(accountId, now)) > 0) {
      slot = await keys.claimSlot(accountId, keyId, now);
    }
    if (slot === null) {
      // The spec answers the sixth key with a 400, the status of a request that cannot be served.
      throw new DomainError(
        'malformed',
        `An account can have at most ${MAX_ACTIVE_KEYS} active API keys: revoke one before creating another`,
      );
    }
    return slot;
  }

  list(accountId: string): Promise<ApiKey[]> {
    return this.deps.keys.listActive(accountId);
  }

  async revokeById(session: SessionPrincipal, keyId: string): Promise<ApiKey> {
    const { keys, audit, clock } = this.deps;
    const now = clock();
    const revoked = await keys.revoke(session.userId, keyId, now);
    if (!revoked) {
      // Nothing of the caller's was revoked; the unscoped read only chooses the answer.
      const existing = await keys.findForAuthentication(keyId);
      if (!existing) throw new DomainError('not_found', `No API key with id ${keyId}`);
      if (existing.accountId !== session.userId) {
        throw new DomainError('forbidden', `API key ${keyId} belongs to another account`);
      }
      throw new DomainError('not_found', `API key ${keyId} is already revoked`);
    }
    await keys.releaseSlot(revoked.accountId, revoked.slot, revoked.id);
    await audit.record({
      accountId: revoked.accountId,
      at: now,
      action: 'api_key.revoked',
      actor: { type: 'session', id: session.sessionId },
      keyId,
    });
    return revoked;
  }

  /** Revocation by the raw value proves possession too: a wrong secret revokes nothing. */
  async revokeByValue(session: SessionPrincipal, value: string): Promise<ApiKey> {
    const parsed = parseApiKey(value);
    if (!parsed) {
      throw new DomainError('invalid', 'key: not an API key of the form svc_<id>_<secret>');
    }
    const existing = await this.deps.keys.findForAuthentication(parsed.keyId);
    if (!existing || !secretMatches(parsed.secret, existing.secretHash)) {
      throw new DomainError('not_found', 'No API key matches that value');
    }
    return this.revokeById(session, parsed.keyId);
  }

  /**
   * Every request is answered from a database read that started after it arrived, so a
   * revocation is seen by every replica on the next request; no cache can accept a revoked key.
   */
  async authenticate(value: string): Promise<ApiKeyPrincipal | null> {
    const parsed = parseApiKey(value);
    if (!parsed) return null;
    const key = await this.lookups.load(parsed.keyId);
    if (!key || key.revokedAt || key.suspendedAt || !secretMatches(parsed.secret, key.secretHash))
      return null;
    this.noteUse(key.id);
    return { keyId: key.id, accountId: key.accountId, scopes: key.scopes };
  }

  private noteUse(keyId: string): void {
    const now = this.deps.clock();
    const last = this.lastUsedWrites.get(keyId) ?? 0;
    if (now.getTime() - last < LAST_USED_RESOLUTION_MS) return;
    if (this.lastUsedWrites.size >= LAST_USED_MEMORY) this.lastUsedWrites.clear();
    this.lastUsedWrites.set(keyId, now.getTime());
    // Off the request path: a failed write only leaves `last used` a little behind.
    this.deps.keys.touchLastUsed(keyId, now).catch(() => this.lastUsedWrites.delete(keyId));
  }
}
