/**
 * The contract between the API, the worker, activities and workflows: inputs, outputs and the
 * search attributes the Temporal UI filters on. Imported by workflow code, so it stays pure.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const DEFAULT_TASK_QUEUE = 'tripwire';

/** Registered on the dev server at start and by the compose set-up job; Keyword type. */
export const searchAttributes = {
  accountId: defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD),
} as const;

export const SEARCH_ATTRIBUTE_NAMES = Object.values(searchAttributes).map((key) => key.name);

export interface WorkerPingInput {
  accountId: string;
  requestId: string;
}

export interface WorkerPingResult {
  pingId: string;
  recordedAt: string;
  attempt: number;
}
