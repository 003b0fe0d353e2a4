import { pagerDutyEvent } from '../../src/alerts/providers/pagerduty';
import { teamsMessage } from '../../src/alerts/providers/teams';
import { subscribes } from '../../src/alerts/routing';
import { testAlertPayload } from '../../src/alerts/payload';
import { alertOutcome } from '../../workflows/shared';

describe('routing', () => {
  const all = { events: null, minLevel: null };
  it.each([
    [all, 'canary.tripwire_triggered', 'MEDIUM', true],
    [{ ...all, minLevel: 'HIGH' as const }, 'canary.tripwire_triggered', 'MEDIUM', false],
    [{ ...all, minLevel: 'HIGH' as const }, 'canary.tripwire_triggered', 'HIGH', true],
    [{ ...all, minLevel: 'HIGH' as const }, 'canary.tripwire_triggered', 'CRITICAL', true],
    [{ ...all, minLevel: 'CRITICAL' as const }, 'canary.tripwire_triggered', 'HIGH', false],
    [
      { ...all, events: ['canary.test_alert' as const] },
      'canary.tripwire_triggered',
      'HIGH',
      false,
    ],
    [
      { ...all, events: ['canary.tripwire_triggered' as const] },
      'canary.tripwire_triggered',
      'HIGH',
      true,
    ],
  ])(
    'when a channel subscribes to %j, then a %s at %s reaching it is %s',
    (channel, event, level, expected) => {
      expect(subscribes(channel, { event, level })).toBe(expected);
    },
  );
});

describe("an alert's outcome over its deliveries", () => {
  it.each([
    [['delivered', 'skipped'], 'delivered'],
    [['delivered', 'failed'], 'partly_failed'],
    [['failed', 'skipped'], 'failed'],
    [['skipped'], 'nothing_sent'],
    [[], 'nothing_sent'],
  ] as const)('when deliveries end %j, then it is %s', (outcomes, expected) => {
    expect(alertOutcome(outcomes.map((outcome) => ({ outcome })))).toBe(expected);
  });
});

describe('Teams and PagerDuty renderings', () => {
  const payload = testAlertPayload(new Date('2026-11-21T10:00:00Z'));
  it('when rendered for PagerDuty, then the delivery id is the dedup key and the level maps to a severity', () => {
    expect(pagerDutyEvent(payload, 'k'.repeat(32), 'dlv_1')).toMatchObject({
      routing_key: 'k'.repeat(32),
      event_action: 'trigger',
      dedup_key: 'dlv_1',
      payload: { severity: 'warning', source: 'channel test', class: 'canary.test_alert' },
    });
  });
  it('when rendered for Teams, then it is one Adaptive Card with the headline and the facts', () => {
    const [card] = teamsMessage(payload).attachments;
    expect(card!.content.body[0]).toMatchObject({
      type: 'TextBlock',
      text: expect.stringContaining('[TEST]'),
    });
    expect(card!.content.body[1]).toMatchObject({ type: 'FactSet' });
  });
});
