import { ApplicationFailure } from '@temporalio/activity';
import type { ZodSafeParseResult } from 'zod';
import {
  alertPayloadSchema,
  parseOutgoing,
  type AlertPayload,
  type OutgoingPayload,
} from '../src/alerts/payload';
import { INVALID_INPUT, type AlertPayloadJson } from '../workflows/shared';

/** A checked payload: one that fails its schema fails for good. */
function checked<T>(parsed: ZodSafeParseResult<T>): T {
  if (parsed.success) return parsed.data;
  throw ApplicationFailure.create({
    type: INVALID_INPUT,
    message: `the alert's payload is not a v1 payload: ${parsed.error.message}`,
    nonRetryable: true,
  });
}

/** Anything sent to a channel: a v1 alert or a notice (`channel.disabled`). */
export const parsePayload = (json: AlertPayloadJson): OutgoingPayload =>
  checked<OutgoingPayload>(parseOutgoing(json));

/** A v1 alert only (a threat alert being sealed). */
export const parseAlertPayload = (json: AlertPayloadJson): AlertPayload =>
  checked(alertPayloadSchema.safeParse(json));
