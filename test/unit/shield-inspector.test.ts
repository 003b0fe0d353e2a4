import type { PresentedHit, Tripwires } from '../../src/canaries/tripwires';
import type { EvidenceRepository } from '../../src/evidence/evidence.repository';
import type { EvidenceStore } from '../../src/evidence/evidence.store';
import { signPromise } from '../../src/evidence/log/inclusion-promise';
import { generateSigner } from '../../src/evidence/log/signed-note';
import { ShieldInspector } from '../../src/shield/shield.service';

const signer = generateSigner('tripwire.test/evidence').signer;

const MARKER = 'ref-abcdefghijklmnopqrstuv';

/** A tripwire stand-in that knows one rag marker as a canary and remembers what it was told. */
function inspectorWith() {
  const heard: PresentedHit[] = [];
  const tripwires = {
    recordHit: (hit: PresentedHit) => {
      heard.push(hit);
      return Promise.resolve(hit.secrets.includes(MARKER) ? 'cnr_1' : null);
    },
  } as unknown as Tripwires;
  const store = {
    append: () =>
      Promise.resolve({
        id: 'evd_1',
        contentHash: 'ab'.repeat(32),
        sealedAt: new Date(),
        leafIndex: 0,
      }),
  } as unknown as EvidenceStore;
  const inspector = new ShieldInspector({
    tripwires,
    store,
    evidence: {} as EvidenceRepository,
    log: {
      promise: (record, leafIndex) =>
        signPromise(signer, {
          leafIndex,
          contentHash: record.contentHash!,
          sealedAt: record.sealedAt,
        }),
    },
  });
  return { inspector, heard };
}

const presenter = { client: { ip: '203.0.113.9', userAgent: 'agent/1' }, requestId: 'req_1' };

describe('ShieldInspector', () => {
  it('when a message carries a planted rag marker, then it blocks and the tripwire hears who presented it', async () => {
    const { inspector, heard } = inspectorWith();

    const result = await inspector.inspect(presenter, 'usr_1', 'end-user', `see ${MARKER} please`);

    expect(result.verdict).toBe('block');
    expect(result.findings[0]).toMatchObject({ rule: 'canary.leak', span: { text: MARKER } });
    expect(heard).toEqual([
      { secrets: [MARKER], via: 'shield', client: presenter.client, requestId: 'req_1' },
    ]);
  });

  it('when a message carries no canary, then the tripwire is not asked', async () => {
    const { inspector, heard } = inspectorWith();

    const result = await inspector.inspect(presenter, 'usr_1', 'end-user', 'what is the weather');

    expect(result.verdict).toBe('allow');
    expect(heard).toEqual([]);
  });
});
