import type { Db } from 'mongodb';
import { z } from 'zod';
import type { AuthService, SessionPrincipal } from '../accounts/auth.service';
import { invitesIndexes } from '../accounts/invites.repository';
import { knownDevicesIndexes } from '../accounts/known-devices.repository';
import { loginFailuresIndexes } from '../accounts/login-failures.repository';
import { accountKey } from '../accounts/login-throttle';
import { retiredRefreshesIndexes, sessionsIndexes } from '../accounts/sessions.repository';
import type { UsersRepository } from '../accounts/users.repository';
import { canariesIndexes, canaryTokensIndexes } from '../canaries/canaries.repository';
import { threatEventsIndexes, threatStormsIndexes } from '../canaries/threats.repository';
import type { Clock } from '../clock';
import { EVIDENCE_REMOVED_KIND } from '../evidence/chain-walk';
import type { DataKeys } from '../evidence/data-keys';
import type { EvidenceRepository } from '../evidence/evidence.repository';
import type { EvidenceStore } from '../evidence/evidence.store';
import { holdsPlainPersonal } from '../evidence/personal-fields';
import { keySlotsIndexes } from '../keys/api-keys.repository';
import type { Logger } from '../logger';
import { countersIndexes } from '../metering/counters.repository';
import { counterKeyPrefix } from '../metering/meter';
import { ACCOUNT_SECTIONS, sectionFilter } from './privacy-export';

export const erasureView = z
  .object({
    account_id: z.string(),
    erased: z.literal(true),
    /** Sealed records kept: their hashes, links and proofs verify; their personal values are gone. */
    evidence_records_kept: z.number().int(),
    /** Records sealed with personal values in the clear (before digests), removed under a sealed removal. */
    evidence_records_removed: z.number().int(),
  })
  .meta({ id: 'Erasure' });
export type Erasure = z.output<typeof erasureView>;

interface Deps {
  db: Db;
  users: UsersRepository;
  auth: AuthService;
  keys: DataKeys;
  evidence: EvidenceRepository;
  store: EvidenceStore;
  clock: Clock;
  logger: Logger;
  /**
   * Removes the account's weekly digest Schedule. Best effort: with its settings gone a scheduled
   * run sends nothing, so Temporal being down must not hold the erasure (or the start) back.
   */
  forgetSchedules(accountId: string): Promise<void>;
}

/**
 * Erases an account's personal data without breaking the evidence log (docs/evidence.md). The
 * account is marked first; every later step is idempotent, so a crash part-way is finished by a
 * retry or at the next start (`resumeUnfinished`). Order: no one can act for the account any more
 * (sessions and keys), then its data key is destroyed (every personal value in sealed evidence is
 * unreadable from that instant), then the rest goes, and the account itself last.
 */
export class PrivacyErasure {
  constructor(private readonly deps: Deps) {}

  /** The session's own account, once its password is confirmed. */
  async erase(
    principal: SessionPrincipal,
    password: string,
    source: string | undefined,
  ): Promise<Erasure> {
    const user = await this.deps.auth.confirmPassword(principal, password, 'password', source);
    await this.deps.users.markErasing(user.id, this.deps.clock());
    return this.finish(user.id);
  }

  /**
   * From start, every `intervalMs`: an erasure a failure cut short in a running process (its
   * sessions may be gone already, so its owner cannot ask again) is finished without a restart.
   * Steps are idempotent, so replicas running this at once do no harm. Returns a stop.
   */
  resumeEvery(intervalMs: number): () => void {
    const timer = setInterval(() => {
      this.resumeUnfinished().catch((err: unknown) =>
        this.deps.logger.error({ err }, 'could not finish an account erasure (tried again later)'),
      );
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Finishes the erasures a crash left part-way; run at start. */
  async resumeUnfinished(): Promise<number> {
    const unfinished = await this.deps.users.erasing();
    for (const accountId of unfinished) {
      await this.finish(accountId);
      this.deps.logger.info({ accountId }, 'finished an account erasure left part-way');
    }
    return unfinished.length;
  }

  private async finish(accountId: string): Promise<Erasure> {
    const { db, users, keys, evidence, clock } = this.deps;
    const user = await users.findById(accountId);
    const now = clock();
    await db.collection(sessionsIndexes.collection).deleteMany({ userId: accountId });
    await db.collection(retiredRefreshesIndexes.collection).deleteMany({ userId: accountId });
    await db.collection(keySlotsIndexes.collection).deleteMany({ accountId });
    await keys.destroy(accountId, now);
    const removed = await this.removeClearRecords(accountId);
    await evidence.forgetPersonal(accountId);
    await this.deleteKeyedElsewhere(accountId);
    for (const section of ACCOUNT_SECTIONS) {
      if (section.keepOnErasure) continue;
      await db.collection(section.collection).deleteMany(sectionFilter(section, accountId));
    }
    // A range on `_id`: every counter of the account begins with its prefix.
    const prefix = counterKeyPrefix(accountId);
    await db.collection(countersIndexes.collection).deleteMany({
      _id: { $gte: prefix, $lt: `${prefix}\uffff` } as never,
    });
    if (user) {
      // Sign-in bookkeeping is keyed by a digest of the email, which only the account still holds.
      const key = accountKey(user.email);
      const devices = await db
        .collection(knownDevicesIndexes.collection)
        .find({ account: key }, { projection: { _id: 1 } })
        .toArray();
      await db.collection(loginFailuresIndexes.collection).deleteMany({
        _id: { $in: [key, ...devices.map((d) => `device:${String(d._id)}`)] } as never,
      });
      await db.collection(knownDevicesIndexes.collection).deleteMany({ account: key });
      await db.collection(invitesIndexes.collection).deleteMany({ email: user.email });
    }
    await this.deps
      .forgetSchedules(accountId)
      .catch((err: unknown) =>
        this.deps.logger.warn(
          { err, accountId },
          "could not delete an erased account's weekly digest Schedule (its runs send nothing)",
        ),
      );
    await users.remove(accountId);
    const kept = await evidence.countUpTo(accountId, Number.MAX_SAFE_INTEGER);
    return {
      account_id: accountId,
      erased: true,
      evidence_records_kept: kept,
      evidence_records_removed: removed,
    };
  }

  /**
   * Records sealed before personal values were sealed as digests hold them in their hashed
   * fields, so no key can take them back: they are removed like a forced delete, the removal
   * sealed first (a crash after it leaves a gap it already explains). Its fixed log id makes a
   * retry find it rather than seal another.
   */
  private async removeClearRecords(accountId: string): Promise<number> {
    const { evidence, store, clock } = this.deps;
    const clear: number[] = [];
    const logIds: string[] = [];
    for await (const record of evidence.streamAscending(accountId)) {
      if (record.kind === EVIDENCE_REMOVED_KIND || !holdsPlainPersonal(record.kind, record.data)) {
        continue;
      }
      clear.push(record.seq);
      logIds.push(record.id);
    }
    if (!clear.length) return 0;
    await store.append(accountId, {
      logId: `evd_erasure_${accountId}`,
      kind: EVIDENCE_REMOVED_KIND,
      data: {
        target: 'account erasure',
        reason: 'sealed with personal values in the clear',
        removed_records: clear.length,
        removed_seqs: clear,
        by: { type: 'erasure', user_id: accountId },
        at: clock().toISOString(),
      },
    });
    return evidence.removeForcibly(accountId, logIds);
  }

  /**
   * What is keyed by something else than the account, found through what is: the canaries' token
   * digests, and the storm windows (keyed by canary and source address) of its threat events.
   * Before the canaries and events themselves, so a retry still finds them.
   */
  private async deleteKeyedElsewhere(accountId: string): Promise<void> {
    const { db } = this.deps;
    const digests = await db
      .collection<{ tokenDigests: string[] }>(canariesIndexes.collection)
      .find({ accountId }, { projection: { tokenDigests: 1 } })
      .toArray();
    const tokens = digests.flatMap((canary) => canary.tokenDigests ?? []);
    if (tokens.length) {
      await db
        .collection(canaryTokensIndexes.collection)
        .deleteMany({ _id: { $in: tokens } as never });
    }
    const eventIds = await db
      .collection(threatEventsIndexes.collection)
      .find({ accountId }, { projection: { _id: 1 } })
      .map((doc) => doc._id)
      .toArray();
    if (eventIds.length) {
      await db
        .collection(threatStormsIndexes.collection)
        .deleteMany({ threatEventId: { $in: eventIds } });
    }
  }
}
