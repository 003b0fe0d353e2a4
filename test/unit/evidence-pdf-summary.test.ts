import { summarize } from '../../src/evidence/export/evidence-pdf';

describe("a PDF line's summary of a record's data", () => {
  it('names nested fields by path, and lists values and objects of a list in turn', () => {
    expect(
      summarize({
        canary_id: 'cnr_1',
        mail_server: { ip: '192.0.2.5', host: null },
        canary_ids: ['cnr_1', 'cnr_2'],
        hits: [
          { hit_id: 'hit_1', at: '2026-12-04T17:00:00.000Z' },
          { hit_id: 'hit_2', at: '2026-12-04T17:00:01.000Z' },
        ],
      }),
    ).toBe(
      'canary_id: cnr_1; mail_server.ip: 192.0.2.5; mail_server.host: null; canary_ids: cnr_1, cnr_2; ' +
        'hits: (hit_id: hit_1; at: 2026-12-04T17:00:00.000Z), (hit_id: hit_2; at: 2026-12-04T17:00:01.000Z)',
    );
  });
});
