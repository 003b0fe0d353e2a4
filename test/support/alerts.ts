import type { AlertPayloadJson } from '../../workflows/shared';

/** A valid v1 payload of a fired canary, for tests that start real alerts. */
export function tripwirePayload(threatEventId: string): AlertPayloadJson {
  const now = new Date().toISOString();
  return {
    version: '1',
    event: 'canary.tripwire_triggered',
    sentAt: now,
    data: {
      event: 'canary.tripwire_triggered',
      alertLevel: 'HIGH',
      platform: 'test',
      canaryId: 'cnr_test',
      canaryAgeDays: 3,
      attacker: {
        ip: '203.0.113.5',
        country: 'NL',
        city: 'Amsterdam',
        org: 'Example',
        type: 'datacenter',
        abuseScore: null,
      },
      riskScore: 70,
      riskLevel: 'high',
      interpretation: 'A decoy credential was used.',
      threatEventId,
      triggeredAt: now,
    },
  };
}
