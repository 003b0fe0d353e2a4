import type { Caller } from '../../src/auth/caller';
import type { CanariesRepository } from '../../src/canaries/canaries.repository';
import {
  EVIDENCE_REMOVED_KIND,
  EvidenceBoundRemoval,
} from '../../src/canaries/evidence-bound-removal';
import type { ThreatsRepository } from '../../src/canaries/threats.repository';
import type { EvidenceRepository } from '../../src/evidence/evidence.repository';
import type { EvidenceStore } from '../../src/evidence/evidence.store';

/**
 * Stand-ins that record what the removal asked of them: one trap with `hitCount` sealed hits, each
 * in a record of its own unless `perRecord` of them share one.
 */
function removalWith(hitCount: number, perRecord = 1) {
  const calls: string[] = [];
  const removedIds: string[][] = [];
  const sealed: { kind: string; data: Record<string, unknown> }[] = [];
  const hits = Array.from({ length: hitCount }, (_, i) => {
    const record = Math.floor(i / perRecord);
    return { evidence: { logId: `evd_${record}`, seq: record + 1 } };
  });
  const threats = {
    hitsOf: () => (calls.push('hitsOf'), Promise.resolve(hits)),
    removeFor: () => (calls.push('removeFor'), Promise.resolve()),
  } as unknown as ThreatsRepository;
  const canaries = {
    find: (_: string, id: string) => Promise.resolve({ id, retiredAt: null }),
    retire: () => (calls.push('retire'), Promise.resolve()),
  } as unknown as CanariesRepository;
  const evidence = {
    removeForcibly: (_: string, ids: string[]) => (
      calls.push('removeForcibly'),
      removedIds.push(ids),
      Promise.resolve(ids.length)
    ),
  } as unknown as EvidenceRepository;
  const store = {
    append: (_: string, input: { kind: string; data: Record<string, unknown> }) => {
      sealed.push(input);
      return Promise.resolve({});
    },
  } as unknown as EvidenceStore;
  const removal = new EvidenceBoundRemoval({
    canaries,
    threats,
    evidence,
    store,
    clock: () => new Date('2026-03-14T09:00:00Z'),
  });
  return { removal, calls, sealed, removedIds };
}

const target = (force: boolean) => ({
  accountId: 'usr_1',
  canaryIds: ['cnr_1'],
  label: 'Trap trp_1',
  force,
});
const apiKey: Caller = { type: 'api_key', keyId: 'key_1', accountId: 'usr_1', scopes: ['*'] };
const session: Caller = { type: 'session', userId: 'usr_1' };

describe('EvidenceBoundRemoval', () => {
  it('when an API key asks for force, whatever its scopes, then it is forbidden before anything is read or removed', async () => {
    const { removal, calls } = removalWith(2);

    await expect(removal.remove(apiKey, target(true))).rejects.toMatchObject({
      kind: 'forbidden',
    });
    expect(calls).toEqual([]);
  });

  it('when evidence exists and force is not asked, then it is a conflict and nothing is retired', async () => {
    const { removal, calls } = removalWith(2);

    await expect(removal.remove(session, target(false))).rejects.toMatchObject({
      kind: 'conflict',
      detail: expect.stringContaining(
        'Trap trp_1 holds 2 hits sealed in 2 evidence records',
      ) as string,
    });
    expect(calls).toEqual(['hitsOf']);
  });

  it('when no evidence exists, then an API key may delete without force', async () => {
    const { removal, calls, sealed } = removalWith(0);

    await expect(removal.remove(apiKey, target(false))).resolves.toEqual({ removedHits: 0 });
    expect(calls).toEqual(['hitsOf', 'retire']);
    expect(sealed).toEqual([]);
  });

  it('when a console session forces it, then the evidence goes and the removal is sealed under its user', async () => {
    const { removal, calls, sealed } = removalWith(2);

    await expect(removal.remove(session, target(true))).resolves.toEqual({ removedHits: 2 });
    expect(calls).toEqual(['hitsOf', 'retire', 'removeForcibly', 'removeFor']);
    expect(sealed).toEqual([
      expect.objectContaining({
        kind: EVIDENCE_REMOVED_KIND,
        data: expect.objectContaining({
          removed_seqs: [1, 2],
          by: { type: 'session', user_id: 'usr_1' },
        }) as unknown,
      }),
    ]);
  });

  it('when hits share sealed records, then each record is removed once and the removal counts both', async () => {
    const { removal, sealed, removedIds } = removalWith(5, 3);

    await expect(removal.remove(session, target(false))).rejects.toMatchObject({
      detail: expect.stringContaining('holds 5 hits sealed in 2 evidence records') as string,
    });
    await expect(removal.remove(session, target(true))).resolves.toEqual({ removedHits: 5 });
    expect(removedIds).toEqual([['evd_0', 'evd_1']]);
    expect(sealed[0]!.data).toMatchObject({
      removed_hits: 5,
      removed_records: 2,
      removed_seqs: [1, 2],
    });
  });
});
