import type { Canary } from '../../src/canaries/canaries.repository';
import { HITS_PER_RECORD, recordsFor, type HitReport } from '../../src/canaries/hit-records';
import type { HitSource } from '../../src/canaries/threats.repository';

const source = (userAgent: string): HitSource => ({
  ip: '198.51.100.7',
  userAgent,
  via: 'url',
  mailServer: null,
});

const hit = (n: number, userAgent = 'curl/8', fresh = true): HitReport => ({
  id: `hit_${String(n).padStart(6, '0')}`,
  canaryId: 'cnr_1',
  stormKey: 'cnr_1|198.51.100.7',
  at: new Date(Date.UTC(2026, 11, 4, 17, 0, 0, n)),
  source: source(userAgent),
  requestId: `req_${n}`,
  fresh,
});

const storm = (hits: HitReport[]) => ({
  stormKey: 'cnr_1|198.51.100.7',
  canary: { id: 'cnr_1', kind: 'url' } as Canary,
  threatEventId: 'thr_1',
  hits,
});

describe("a seal's hits as threat.hit records", () => {
  it('seals the hits of one source together, the source once and each hit by id, time and request id', () => {
    const [record, ...rest] = recordsFor(storm([hit(1), hit(2)]), new Map());
    expect(rest).toEqual([]);
    expect(record!.logId).toBe('evd_000001');
    expect(record!.data).toEqual({
      threat_event_id: 'thr_1',
      canary_id: 'cnr_1',
      canary_kind: 'url',
      via: 'url',
      ip: '198.51.100.7',
      user_agent: 'curl/8',
      mail_server: null,
      hits: [
        { hit_id: 'hit_000001', at: '2026-12-04T17:00:00.001Z', request_id: 'req_1' },
        { hit_id: 'hit_000002', at: '2026-12-04T17:00:00.002Z', request_id: 'req_2' },
      ],
    });
  });

  it('gives each source its records, at most HITS_PER_RECORD hits in one, and a sealed hit its own record again', () => {
    const many = Array.from({ length: 2 * HITS_PER_RECORD + 1 }, (_, i) => hit(10 + i));
    const other = [hit(5000, 'python-requests/2'), hit(5001, 'python-requests/2')];
    const replayed = hit(1, 'curl/8', false);
    const records = recordsFor(
      storm([replayed, ...many, ...other]),
      new Map([[replayed.id, 'evd_sealed_before']]),
    );

    expect(records.map((r) => [r.logId, r.hits.length])).toEqual([
      ['evd_sealed_before', 1],
      ['evd_000010', HITS_PER_RECORD],
      [`evd_${String(10 + HITS_PER_RECORD).padStart(6, '0')}`, HITS_PER_RECORD],
      [`evd_${String(10 + 2 * HITS_PER_RECORD).padStart(6, '0')}`, 1],
      ['evd_005000', 2],
    ]);
    expect(records.at(-1)!.data).toMatchObject({ user_agent: 'python-requests/2' });
  });
});
