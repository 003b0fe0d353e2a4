import { ApplicationFailure } from '@temporalio/activity';
import { alertPayloadSchema, type AlertPayload } from '../src/alerts/payload';
import { INVALID_INPUT, type AlertPayloadJson } from '../workflows/shared';

/** A payload from the workflow, checked: one that fails the v1 schema fails for good. */
export function parsePayload(json: AlertPayloadJson): AlertPayload {
  const parsed = alertPayloadSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  throw ApplicationFailure.create({
    type: INVALID_INPUT,
    message: `the alert's payload is not a v1 payload: ${parsed.error.message}`,
    nonRetryable: true,
  });
}
