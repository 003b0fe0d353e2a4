import pino from 'pino';
import type { AuditEntry, AuditTrailRepository } from '../../src/audit/audit-trail.repository';
import { AuditTrailWriter } from '../../src/audit/audit-trail.writer';

function entry(n: number): Omit<AuditEntry, 'id'> {
  return {
    accountId: 'usr_a',
    at: new Date(1_700_000_000_000 + n),
    action: 'api_key.used',
    actor: { type: 'api_key', id: 'k' },
    keyId: 'k',
    request: { method: 'GET', path: `/shield/${n}`, status: 200, requestId: `r${n}` },
  };
}

/** Records what reaches the database; fails the first `failures` writes. */
function fakeRepository(failures = 0) {
  const written: AuditEntry[] = [];
  let calls = 0;
  const repository = {
    appendMany: (entries: readonly AuditEntry[]) => {
      calls += 1;
      if (calls <= failures) return Promise.reject(new Error('database down'));
      written.push(...entries);
      return Promise.resolve();
    },
  } as unknown as AuditTrailRepository;
  return { repository, written, calls: () => calls };
}

const silent = pino({ level: 'silent' });

describe('AuditTrailWriter', () => {
  it('when entries are recorded, then one flush writes them all in order with ids', async () => {
    const fake = fakeRepository();
    const writer = new AuditTrailWriter(fake.repository, silent);
    for (let i = 0; i < 3; i++) writer.record(entry(i));
    await writer.close();
    expect(fake.written.map((e) => e.request?.requestId)).toEqual(['r0', 'r1', 'r2']);
    expect(fake.written.every((e) => /^aud_[0-9a-f]{28}$/.test(e.id))).toBe(true);
    expect(fake.calls()).toBe(1);
  });

  it('when a write fails, then the entries are kept and written by the next flush', async () => {
    const fake = fakeRepository(1);
    const writer = new AuditTrailWriter(fake.repository, silent);
    writer.record(entry(1));
    await expect(writer.flush()).rejects.toThrow('database down');
    expect(fake.written).toEqual([]);
    writer.record(entry(2));
    await writer.close();
    expect(fake.written.map((e) => e.request?.requestId)).toEqual(['r1', 'r2']);
  });

  it('when left to itself, then it flushes within a moment of the last entry', async () => {
    const fake = fakeRepository();
    const writer = new AuditTrailWriter(fake.repository, silent);
    writer.record(entry(1));
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.written).toHaveLength(1);
    await writer.close();
  });

  it('when more than one batch is waiting, then they are written in batches of at most 500', async () => {
    const fake = fakeRepository();
    const writer = new AuditTrailWriter(fake.repository, silent);
    for (let i = 0; i < 1_200; i++) writer.record(entry(i));
    await writer.close();
    expect(fake.written).toHaveLength(1_200);
    expect(fake.calls()).toBe(3);
  });
});
