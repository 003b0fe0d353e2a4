import { visibilityQuery } from '../../src/workflow-runs/workflow-runs';

describe("a tenant's visibility query", () => {
  it('always opens with the account and adds each filter', () => {
    expect(
      visibilityQuery('usr_a', {
        status: 'timed_out',
        event: 'canary.test_alert',
        canaryId: 'cnr_1',
        since: new Date('2026-11-01T00:00:00Z'),
        until: new Date('2026-11-02T00:00:00Z'),
      }),
    ).toBe(
      "AccountId = 'usr_a' AND ExecutionStatus = 'TimedOut' AND AlertEvent = 'canary.test_alert' AND CanaryId = 'cnr_1' AND StartTime >= '2026-11-01T00:00:00.000Z' AND StartTime <= '2026-11-02T00:00:00.000Z'",
    );
  });

  it.each([
    ['accountId', "usr_a' OR AccountId != '", {}],
    ['event', 'usr_a', { event: "x' OR 'a' = 'a" }],
    ['canaryId', 'usr_a', { canaryId: 'cnr_1) OR (1=1' }],
  ])('refuses a %s that could leave its quotes', (_name, accountId, filters) => {
    expect(() => visibilityQuery(accountId, filters)).toThrow(/visibility filter value/);
  });
});
