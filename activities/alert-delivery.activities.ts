import { createHash } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Db } from 'mongodb';
import {
  resolveSafeTarget,
  UnsafeTargetError,
  type SafeTarget,
} from '../src/alerts/address-safety';
import { channelRequest } from '../src/alerts/channel-requests';
import { ChannelsRepository } from '../src/alerts/channels.repository';
import { DeliveriesRepository, type DeliveryContext } from '../src/alerts/deliveries.repository';
import {
  classify,
  postOnce,
  REQUEST_TIMEOUT_MS,
  type AttemptResult,
} from '../src/alerts/http-delivery';
import { alertPayloadSchema } from '../src/alerts/payload';
import { DELIVERY_OUTCOME_KIND } from '../src/audit/audit-trail';
import { EvidenceStore } from '../src/evidence/evidence.store';
import {
  DELIVERY_REJECTED,
  DELIVERY_RETRYABLE,
  UNSAFE_TARGET,
  type AlertPayloadJson,
  type ChannelResult,
  type DeliveryTarget,
} from '../workflows/shared';

export interface AlertDeliveryDeps {
  db: Db;
  /** ALLOW_PRIVATE_WEBHOOK_TARGETS: development and tests only. */
  allowPrivateTargets: boolean;
}

/** Built-in channels of this deployment. Email and chat delivery are not configurable yet. */
const BUILT_IN_TARGETS: DeliveryTarget[] = [
  { channelId: 'builtin:email', kind: 'email', skip: 'not configured (SMTP_URL unset)' },
  { channelId: 'builtin:chat', kind: 'chat', skip: 'not configured (TELEGRAM_BOT_TOKEN unset)' },
];

function describeAttempt(result: AttemptResult): string {
  if (result.kind === 'response') return `HTTP ${result.status}`;
  if (result.kind === 'timeout') return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  return result.message;
}

export function alertDeliveryActivities({ db, allowPrivateTargets }: AlertDeliveryDeps) {
  const channels = new ChannelsRepository(db);
  const deliveries = new DeliveriesRepository(db);
  const evidence = new EvidenceStore(db, () => new Date());

  return {
    /** The account's channels (or the chosen ones), and the built-ins unless a channel is chosen. */
    async listDeliveryTargets(accountId: string, channelIds?: string[]): Promise<DeliveryTarget[]> {
      const all = await channels.list(accountId);
      const chosen = channelIds ? all.filter((c) => channelIds.includes(c.id)) : all;
      const targets: DeliveryTarget[] = chosen.map((c) => ({
        channelId: c.id,
        kind: c.kind,
        ...(c.disabled && { skip: 'channel disabled' }),
      }));
      return channelIds ? targets : [...targets, ...BUILT_IN_TARGETS];
    },

    /** One attempt: check the address again, send, record the attempt, and classify the answer. */
    async deliverToChannel(input: {
      accountId: string;
      channelId: string;
      deliveryId: string;
      workflowId: string;
      payload: AlertPayloadJson;
    }): Promise<{ status: number }> {
      const { attempt } = Context.current().info;
      const payload = alertPayloadSchema.parse(input.payload);
      const context: DeliveryContext = {
        accountId: input.accountId,
        channelId: input.channelId,
        deliveryId: input.deliveryId,
        workflowId: input.workflowId,
        event: payload.event,
        threatEventId: payload.data.threatEventId,
      };
      const channel = await channels.findById(input.channelId);
      if (!channel || channel.accountId !== input.accountId || channel.disabled) {
        throw ApplicationFailure.nonRetryable('channel deleted or disabled', DELIVERY_REJECTED);
      }
      const at = new Date();
      let target: SafeTarget;
      try {
        target = await resolveSafeTarget(channel.url, {
          requireHttps: true,
          allowPrivate: allowPrivateTargets,
        });
      } catch (err) {
        if (!(err instanceof UnsafeTargetError)) throw err;
        await deliveries.recordAttempt(context, {
          attempt,
          at,
          durationMs: 0,
          status: null,
          error: err.message,
        });
        throw ApplicationFailure.nonRetryable(`unsafe target: ${err.message}`, UNSAFE_TARGET);
      }
      const { body, headers } = channelRequest(channel, payload, input.deliveryId, at);
      const started = performance.now();
      const result = await postOnce(target, body, headers);
      const status = result.kind === 'response' ? result.status : null;
      await deliveries.recordAttempt(context, {
        attempt,
        at,
        durationMs: Math.round(performance.now() - started),
        status,
        error: classify(result) === 'delivered' ? null : describeAttempt(result),
      });
      const verdict = classify(result);
      if (verdict === 'delivered') return { status: status! };
      throw ApplicationFailure.create({
        message: describeAttempt(result),
        type: verdict === 'retry' ? DELIVERY_RETRYABLE : DELIVERY_REJECTED,
        nonRetryable: verdict === 'give-up',
        details: [{ status }],
      });
    },

    /** After the last attempt: the delivery record, the channel's last error, the audit trail. */
    async recordDeliveryOutcome(input: {
      accountId: string;
      workflowId: string;
      event: string;
      threatEventId: string | null;
      result: ChannelResult;
    }): Promise<void> {
      const { accountId, workflowId, event, threatEventId, result } = input;
      const now = new Date();
      const context = {
        accountId,
        channelId: result.channelId,
        deliveryId: result.deliveryId,
        workflowId,
        event,
        threatEventId,
      };
      await deliveries.recordOutcome(context, result, now);
      // A skip stays in the delivery record; deliveries, successful or not, go further.
      if (result.outcome === 'skipped') return;
      if (!result.channelId.startsWith('builtin:')) {
        const failure =
          result.outcome === 'failed'
            ? { message: result.error ?? 'failed', status: result.status ?? null, at: now }
            : null;
        await channels.recordOutcome(accountId, result.channelId, now, failure);
      }
      await evidence.append(accountId, {
        // Fixed per delivery, so a retried activity seals the outcome once.
        logId: `evd_${createHash('sha256').update(result.deliveryId).digest('base64url').slice(0, 16)}`,
        kind: DELIVERY_OUTCOME_KIND,
        data: {
          delivery_id: result.deliveryId,
          workflow_id: workflowId,
          channel_id: result.channelId,
          channel_kind: result.kind,
          event,
          threat_event_id: threatEventId,
          outcome: result.outcome,
          status: result.status ?? null,
          error: result.error ?? null,
        },
      });
    },
  };
}
