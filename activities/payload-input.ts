import { ApplicationFailure } from '@temporalio/activity';
import type { ZodType } from 'zod';
import {
  alertPayloadSchema,
  eventPayloadSchema,
  type AlertPayload,
  type EventPayload,
} from '../src/alerts/payload';
import { INVALID_INPUT, type AlertPayloadJson } from '../workflows/shared';

function parsed<T>(schema: ZodType<T>, json: AlertPayloadJson): T {
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  throw ApplicationFailure.create({
    type: INVALID_INPUT,
    message: `the payload is not a v1 payload: ${result.error.message}`,
    nonRetryable: true,
  });
}

/** A payload from the workflow, checked: one that fails the v1 schema fails for good. */
export const parsePayload = (json: AlertPayloadJson): EventPayload =>
  parsed(eventPayloadSchema, json);

/** An alert's payload (the spec's two events), checked the same way. */
export const parseAlertPayload = (json: AlertPayloadJson): AlertPayload =>
  parsed(alertPayloadSchema, json);
