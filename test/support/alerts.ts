import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import {
  ALERT_NOT_DELIVERED,
  type AlertPayloadJson,
  type AlertResult,
} from '../../workflows/shared';

/**
 * An alert's channel outcomes once it has ended: returned when it completed, carried by the
 * failure when it reached none of its channels.
 */
export async function alertResults(handle: WorkflowHandle): Promise<AlertResult> {
  try {
    return (await handle.result()) as AlertResult;
  } catch (err) {
    const cause = err instanceof WorkflowFailedError ? err.cause : undefined;
    if (!(cause instanceof ApplicationFailure) || cause.type !== ALERT_NOT_DELIVERED) throw err;
    return cause.details![0] as AlertResult;
  }
}

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
