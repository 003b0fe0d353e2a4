import { THREAT_HIT_KIND } from '../../src/canaries/tripwires';
import {
  commitPersonal,
  holdsPlainPersonal,
  openingFailure,
  withOpenings,
} from '../../src/evidence/personal-fields';
import { DELIVERY_OUTCOME_KIND } from '../../src/evidence/trail/audit-trail';

const hit = {
  canary_id: 'cnr_1',
  ip: '198.51.100.7',
  user_agent: 'curl/8.0',
  mail_server: null,
  via: 'url',
};

describe('personal fields in sealed evidence', () => {
  it('seals each present personal value as a salted digest and keeps its opening', () => {
    const { sealed, openings } = commitPersonal('usr_1', THREAT_HIT_KIND, hit);
    expect(sealed).toEqual({
      canary_id: 'cnr_1',
      ip: { personal_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      user_agent: { personal_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      mail_server: null,
      via: 'url',
    });
    expect(openings).toEqual([
      { path: 'ip', salt: expect.any(String), value: '198.51.100.7', subject: 'usr_1' },
      { path: 'user_agent', salt: expect.any(String), value: 'curl/8.0', subject: 'usr_1' },
    ]);
    expect(hit.ip).toBe('198.51.100.7'); // the input is left as it was
    for (const opening of openings) expect(openingFailure(sealed, opening)).toBeNull();
    expect(withOpenings(sealed, openings)).toEqual(hit);
  });

  it('salts every value anew, so equal values never give equal digests', () => {
    const a = commitPersonal('usr_1', THREAT_HIT_KIND, hit).sealed;
    const b = commitPersonal('usr_1', THREAT_HIT_KIND, hit).sealed;
    expect(a.ip).not.toEqual(b.ip);
  });

  it('refuses an opening that is not the sealed value, or points where no digest is', () => {
    const { sealed, openings } = commitPersonal('usr_1', THREAT_HIT_KIND, hit);
    const ip = openings[0]!;
    expect(openingFailure(sealed, { ...ip, value: '192.0.2.1' })).toBe(
      'its personal value at ip does not match the sealed digest',
    );
    expect(openingFailure(sealed, { ...ip, path: 'via' })).toBe(
      'its data has no personal digest at via',
    );
  });

  it("puts an operator's email under the operator's key, in the acted-on account's log", () => {
    const { openings } = commitPersonal('usr_target', 'audit.admin.plan_changed', {
      operator: { account_id: 'usr_op', email: 'op@example.com' },
      account_id: 'usr_target',
    });
    expect(openings).toEqual([
      {
        path: 'operator.email',
        salt: expect.any(String),
        value: 'op@example.com',
        subject: 'usr_op',
      },
    ]);
  });

  it('leaves kinds without personal fields as they are, and tells records sealed in the clear', () => {
    const note = { note: 'n', ip: '198.51.100.7' };
    expect(commitPersonal('usr_1', 'test.note', note)).toEqual({ sealed: note, openings: [] });
    expect(holdsPlainPersonal(THREAT_HIT_KIND, hit)).toBe(true);
    expect(
      holdsPlainPersonal(THREAT_HIT_KIND, commitPersonal('usr_1', THREAT_HIT_KIND, hit).sealed),
    ).toBe(false);
    expect(holdsPlainPersonal(DELIVERY_OUTCOME_KIND, { error: null })).toBe(false);
    expect(holdsPlainPersonal('test.note', note)).toBe(false);
  });
});
