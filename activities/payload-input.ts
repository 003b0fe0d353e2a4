import { ApplicationFailure } from '@temporalio/activity';
import type { ZodSafeParseResult } from 'zod';
import {
  alertPayloadSchema,
  parseEventPayload,
  type AlertPayload,
  type EventPayload,
} from '../src/alerts/payload';
import { INVALID_INPUT, type AlertPayloadJson } from '../workflows/shared';

/** A checked payload: one that fails its schema fails for good. */
function checked<T>(parsed: ZodSafeParseResult<T>): T {
  if (parsed.success) return parsed.data;
  throw ApplicationFailure.create({
    type: INVALID_INPUT,
    message: `the payload is not a v1 payload: ${parsed.error.message}`,
    nonRetryable: true,
  });
}

/** Anything sent to a channel: a v1 alert, a weekly digest or a notice (`channel.disabled`). */
export const parsePayload = (json: AlertPayloadJson): EventPayload =>
  checked<EventPayload>(parseEventPayload(json));

/** A v1 alert only (a threat alert being sealed). */
export const parseAlertPayload = (json: AlertPayloadJson): AlertPayload =>
  checked(alertPayloadSchema.safeParse(json));
