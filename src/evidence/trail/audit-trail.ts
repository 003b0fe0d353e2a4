import { z } from 'zod';
import type { EvidencePage, EvidenceRecord, EvidenceRepository } from '../evidence.repository';
import type { EvidenceInput, EvidenceStore } from '../evidence.store';
import { newTimeOrderedId } from '../../ids';
import { DELIVERY_OUTCOMES } from '../../../workflows/shared';

export const KEY_AUDIT_ACTIONS = ['api_key.created', 'api_key.revoked', 'api_key.used'] as const;
export type AuditAction = (typeof KEY_AUDIT_ACTIONS)[number];

/** What happened, as sealed into the account's evidence log under kind `audit.<action>`. */
export interface AuditEvent {
  accountId: string;
  at: Date;
  action: AuditAction;
  /** Who acted: a console session or an API key (by id). */
  actor: { type: 'session' | 'api_key'; id: string };
  /** The key the entry is about. */
  keyId: string;
  request?: { method: string; path: string; status: number; requestId: string };
}

/** Written by the delivery activities after an alert's last attempt to a channel. */
export const DELIVERY_OUTCOME_KIND = 'audit.delivery.outcome';

/** Written when the service disabled a channel whose deliveries kept failing. */
export const CHANNEL_DISABLED_KIND = 'audit.channel.disabled';

const AUDIT_KINDS = [
  ...KEY_AUDIT_ACTIONS.map((a) => `audit.${a}`),
  DELIVERY_OUTCOME_KIND,
  CHANNEL_DISABLED_KIND,
];

/** What an `audit.api_key.*` record seals (the trail shows it as it was sealed). */
export const keyAuditData = z.object({
  at: z.iso.datetime(),
  actor: z.object({ type: z.enum(['session', 'api_key']), id: z.string() }),
  key_id: z.string(),
  request: z
    .object({
      method: z.string(),
      path: z.string(),
      status: z.number().int(),
      request_id: z.string(),
    })
    .optional(),
});

/** What an `audit.delivery.outcome` record seals: one alert's delivery to one channel. */
export const deliveryOutcomeData = z.object({
  delivery_id: z.string(),
  workflow_id: z.string(),
  channel_id: z.string(),
  channel_kind: z.string(),
  event: z.string(),
  threat_event_id: z.string().nullable(),
  outcome: z.enum(DELIVERY_OUTCOMES),
  status: z.number().int().nullable(),
  error: z.string().nullable(),
});

/** What an `audit.channel.disabled` record seals: the channel, why, and the failure that did it. */
export const channelDisabledData = z.object({
  at: z.iso.datetime(),
  channel_id: z.string(),
  channel_kind: z.string(),
  channel_name: z.string(),
  reason: z.string(),
  failing_since: z.iso.datetime(),
  last_delivery_at: z.iso.datetime().nullable(),
  /** The delivery whose failure disabled it. */
  delivery_id: z.string(),
  error: z.string().nullable(),
});

/** An event ready to seal; the log id is fixed up front so a retried batch is written once. */
export function toEvidence(event: AuditEvent): EvidenceInput {
  return {
    logId: newTimeOrderedId('evd'),
    kind: `audit.${event.action}`,
    data: {
      at: event.at.toISOString(),
      actor: event.actor,
      key_id: event.keyId,
      ...(event.request && {
        request: {
          method: event.request.method,
          path: event.request.path,
          status: event.request.status,
          request_id: event.request.requestId,
        },
      }),
    } satisfies z.output<typeof keyAuditData>,
  };
}

/** The account audit trail: the `audit.*` records of the evidence log, newest first. */
export class AuditTrail {
  constructor(
    private readonly store: EvidenceStore,
    private readonly evidence: EvidenceRepository,
  ) {}

  async record(event: AuditEvent): Promise<EvidenceRecord> {
    return this.store.append(event.accountId, toEvidence(event));
  }

  appendBatch(accountId: string, inputs: readonly EvidenceInput[]): Promise<EvidenceRecord[]> {
    return this.store.appendMany(accountId, inputs);
  }

  /** Read as the owner reads them: personal values (a delivery's error) in place. */
  async page(accountId: string, limit: number, beforeSeq?: number): Promise<EvidencePage> {
    const page = await this.evidence.pageNewestFirst(accountId, {
      kinds: AUDIT_KINDS,
      limit,
      beforeSeq,
    });
    const records = await Promise.all(page.records.map((r) => this.evidence.readable(r)));
    return { ...page, records };
  }
}
