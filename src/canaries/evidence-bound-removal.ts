import type { Response } from 'express';
import type { Clock } from '../clock';
import { assertMayRemoveEvidence } from '../evidence/evidence-protection';
import type { EvidenceRepository } from '../evidence/evidence.repository';
import type { EvidenceStore } from '../evidence/evidence.store';
import { AppError } from '../http/errors';
import type { CanariesRepository } from './canaries.repository';
import type { ThreatsRepository } from './threats.repository';

export const EVIDENCE_REMOVED_KIND = 'evidence.removed';

interface Deps {
  canaries: CanariesRepository;
  threats: ThreatsRepository;
  evidence: EvidenceRepository;
  store: EvidenceStore;
  clock: Clock;
}

/**
 * The spec's delete rule for things whose canaries collect evidence (honeypot traps and their
 * hits, rag documents and their leak records): with no evidence, anyone allowed to write may
 * delete; with evidence, only `force=true`, which removes it too and needs a console session. An
 * API key asking for force is refused whatever its scopes. The removal itself is sealed in the
 * log, so the gap it leaves in the chain is explained.
 */
export class EvidenceBoundRemoval {
  constructor(private readonly deps: Deps) {}

  async remove(
    res: Response,
    target: { accountId: string; canaryIds: string[]; label: string; force: boolean },
  ): Promise<{ removedEvidence: number }> {
    const { canaries, threats, evidence, store, clock } = this.deps;
    const { accountId, canaryIds, label, force } = target;
    if (force) assertMayRemoveEvidence(res);
    const hits = await threats.hitsOf(accountId, canaryIds);
    if (hits.length && !force) {
      throw new AppError(
        409,
        `${label} holds ${hits.length} evidence records: delete with force=true from a signed-in console session to remove them too`,
      );
    }
    const now = clock();
    for (const id of canaryIds) {
      const canary = await canaries.find(accountId, id);
      if (canary && !canary.retiredAt) await canaries.retire(accountId, id, now);
    }
    if (!hits.length) return { removedEvidence: 0 };
    const removed = await evidence.removeForcibly(
      accountId,
      hits.map((h) => h.evidence.logId),
    );
    await threats.removeFor(accountId, canaryIds);
    await store.append(accountId, {
      kind: EVIDENCE_REMOVED_KIND,
      data: {
        target: label,
        canary_ids: canaryIds,
        removed_records: removed,
        removed_seqs: hits.map((h) => h.evidence.seq).sort((a, b) => a - b),
        by: { type: 'session', user_id: res.locals.session!.userId },
        at: now.toISOString(),
      },
    });
    return { removedEvidence: removed };
  }
}
