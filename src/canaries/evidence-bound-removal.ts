import type { Caller } from '../auth/caller';
import type { Clock } from '../clock';
import { evidenceRemover } from '../evidence/evidence-protection';
import type { EvidenceRepository } from '../evidence/evidence.repository';
import type { EvidenceStore } from '../evidence/evidence.store';
import { DomainError } from '../errors';
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
    caller: Caller,
    target: { accountId: string; canaryIds: string[]; label: string; force: boolean },
  ): Promise<{ removedHits: number }> {
    const { canaries, threats, evidence, store, clock } = this.deps;
    const { accountId, canaryIds, label, force } = target;
    const remover = force ? evidenceRemover(caller) : null;
    const hits = await threats.hitsOf(accountId, canaryIds);
    // Hits of one storm and source share a record (tripwires.ts).
    const records = new Map(hits.map((h) => [h.evidence.logId, h.evidence.seq]));
    if (hits.length && !remover) {
      throw new DomainError(
        'conflict',
        `${label} holds ${hits.length} hits sealed in ${records.size} evidence records: delete with force=true from a signed-in console session to remove them too`,
      );
    }
    const now = clock();
    for (const id of canaryIds) await canaries.retire(accountId, id, now);
    if (!hits.length || !remover) return { removedHits: 0 };
    const removed = await evidence.removeForcibly(accountId, [...records.keys()]);
    await threats.removeFor(accountId, canaryIds);
    await store.append(accountId, {
      kind: EVIDENCE_REMOVED_KIND,
      data: {
        target: label,
        canary_ids: canaryIds,
        removed_hits: hits.length,
        removed_records: removed,
        removed_seqs: [...records.values()].sort((a, b) => a - b),
        by: { type: 'session', user_id: remover.userId },
        at: now.toISOString(),
      },
    });
    return { removedHits: hits.length };
  }
}
