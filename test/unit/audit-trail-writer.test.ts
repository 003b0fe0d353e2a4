import pino from 'pino';
import type { AuditEvent, AuditTrail } from '../../src/evidence/trail/audit-trail';
import { AuditTrailWriter } from '../../src/evidence/trail/audit-trail.writer';
import type { EvidenceInput } from '../../src/evidence/evidence.store';

function event(n: number, accountId = 'usr_a'): AuditEvent {
  return {
    accountId,
    at: new Date(1_700_000_000_000 + n),
    action: 'api_key.used',
    actor: { type: 'api_key', id: 'k' },
    keyId: 'k',
    request: { method: 'GET', path: `/shield/${n}`, status: 200, requestId: `r${n}` },
  };
}

/** Records what reaches the store per account; fails the first `failures` writes. */
function fakeTrail(failures = 0) {
  const written: { accountId: string; input: EvidenceInput }[] = [];
  let calls = 0;
  const trail = {
    appendBatch: (accountId: string, inputs: readonly EvidenceInput[]) => {
      calls += 1;
      if (calls <= failures) return Promise.reject(new Error('database down'));
      written.push(...inputs.map((input) => ({ accountId, input })));
      return Promise.resolve([]);
    },
  } as unknown as AuditTrail;
  const requestIds = () =>
    written.map((w) => (w.input.data as { request: { request_id: string } }).request.request_id);
  return { trail, written, requestIds, calls: () => calls };
}

const silent = pino({ level: 'silent' });

describe('AuditTrailWriter', () => {
  it('when entries are recorded, then one flush seals them in order, one batch per account', async () => {
    const fake = fakeTrail();
    const writer = new AuditTrailWriter(fake.trail, silent);
    writer.record(event(0));
    writer.record(event(1, 'usr_b'));
    writer.record(event(2));
    await writer.close();
    expect(fake.written.filter((w) => w.accountId === 'usr_a').map((w) => w.input.kind)).toEqual([
      'audit.api_key.used',
      'audit.api_key.used',
    ]);
    expect(fake.requestIds().sort()).toEqual(['r0', 'r1', 'r2']);
    expect(fake.written.every((w) => /^evd_/.test(w.input.logId ?? ''))).toBe(true);
    expect(fake.calls()).toBe(2);
  });

  it('when a write fails, then the entries are kept and written, with the same ids, next time', async () => {
    const fake = fakeTrail(1);
    const writer = new AuditTrailWriter(fake.trail, silent);
    writer.record(event(1));
    await expect(writer.flush()).rejects.toThrow('database down');
    expect(fake.written).toEqual([]);
    writer.record(event(2));
    await writer.close();
    expect(fake.requestIds()).toEqual(['r1', 'r2']);
  });

  it('when left to itself, then it flushes within a moment of the last entry', async () => {
    const fake = fakeTrail();
    const writer = new AuditTrailWriter(fake.trail, silent);
    writer.record(event(1));
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.written).toHaveLength(1);
    await writer.close();
  });
});
