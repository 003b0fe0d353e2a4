/**
 * A batch's storms claimed and their events opened in one write each, against the real database
 * server: a key whose storm is open joins it, a closed one is claimed anew, and an event already
 * written is reported as not opened by this call while the others in the same write are.
 */
import { MongoClient } from 'mongodb';
import { ThreatsRepository, type ThreatEvent } from '../../src/canaries/threats.repository';
import { testConfig } from '../support/test-app';

const WINDOW_MS = 60_000;

const eventOf = (id: string, at: Date): ThreatEvent => ({
  id,
  accountId: 'usr_claims',
  canaryId: 'cnr_claims',
  canaryKind: 'url',
  platform: 'curl',
  source: { ip: '203.0.113.7', userAgent: 'curl/8', via: 'url', mailServer: null },
  firstHitAt: at,
  lastHitAt: at,
  hitCount: 0,
  alert: null,
});

describe('storm claims', () => {
  const config = testConfig();
  const client = new MongoClient(config.MONGODB_URI);
  const threats = new ThreatsRepository(client.db(config.MONGODB_DB));
  afterAll(() => client.close());

  it('when one write claims a new key, an open one and a closed one, then the open storm is joined and the others are claimed at their hits', async () => {
    const run = Date.now();
    const [open, closed, fresh] = ['open', 'closed', 'fresh'].map(
      (k) => `cnr_${k}_${run}|203.0.113.7`,
    );
    const earlier = new Date(run - 2 * WINDOW_MS);
    const now = new Date(run);
    const [openStorm, closedStorm] = await threats.claimStorms(
      [
        { stormKey: open!, at: new Date(run - 1_000) },
        { stormKey: closed!, at: earlier },
      ],
      WINDOW_MS,
    );

    const storms = await threats.claimStorms(
      [
        { stormKey: fresh!, at: now },
        { stormKey: open!, at: now },
        { stormKey: closed!, at: now },
      ],
      WINDOW_MS,
    );

    expect(storms[1]).toEqual(openStorm);
    expect(storms[2]!.threatEventId).not.toBe(closedStorm!.threatEventId);
    expect(storms.map((s) => s.closesAt.getTime())).toEqual([
      run + WINDOW_MS,
      openStorm!.closesAt.getTime(),
      run + WINDOW_MS,
    ]);
    // Claiming the same keys at the same instant again (a replay, or another replica) names the
    // same events.
    expect(
      await threats.claimStorms(
        [
          { stormKey: fresh!, at: now },
          { stormKey: closed!, at: now },
        ],
        WINDOW_MS,
      ),
    ).toEqual([storms[0], storms[2]]);
  });

  it('when one write opens an event already written beside new ones, then only the new ones are reported opened and the first one is kept as it was', async () => {
    const run = Date.now();
    const at = new Date(run);
    const [first] = await threats.openEvents([eventOf(`thr_written_${run}`, at)]);

    const opened = await threats.openEvents([
      eventOf(`thr_new_a_${run}`, at),
      { ...eventOf(`thr_written_${run}`, at), platform: 'other' },
      eventOf(`thr_new_b_${run}`, at),
    ]);

    expect([first, ...opened]).toEqual([true, true, false, true]);
    const kept = await client
      .db(config.MONGODB_DB)
      .collection('threat_events')
      .findOne({ _id: `thr_written_${run}` as never });
    expect(kept?.platform).toBe('curl');
  });
});
