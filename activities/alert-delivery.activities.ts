import { createHash } from 'node:crypto';
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { Db } from 'mongodb';
import type { z } from 'zod';
import {
  resolveSafeTarget,
  UnsafeTargetError,
  type SafeTarget,
} from '../src/alerts/address-safety';
import { channelRequest } from '../src/alerts/channel-requests';
import {
  AlertMailer,
  BUILT_IN_CHANNEL_IDS,
  isBuiltInChannel,
  sendTelegram,
  type BuiltInSettings,
} from '../src/alerts/built-in-channels';
import { ChannelsRepository } from '../src/alerts/channels.repository';
import { DeliveriesRepository, type DeliveryContext } from '../src/alerts/deliveries.repository';
import { httpAttempt, postOnce, type Attempt } from '../src/alerts/http-delivery';
import { alertPayloadSchema, type AlertPayload } from '../src/alerts/payload';
import { UsersRepository } from '../src/accounts/users.repository';
import { DELIVERY_OUTCOME_KIND, type deliveryOutcomeData } from '../src/audit/audit-trail';
import type { EvidenceStore } from '../src/evidence/evidence.store';
import { deliveryAttempts, deliveryOutcomes } from '../src/metrics';
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
  builtIns: BuiltInSettings;
  evidence: EvidenceStore;
}

export function alertDeliveryActivities({
  db,
  allowPrivateTargets,
  builtIns,
  evidence,
}: AlertDeliveryDeps) {
  const channels = new ChannelsRepository(db);
  const users = new UsersRepository(db);
  const deliveries = new DeliveriesRepository(db);
  const mailer = builtIns.smtpUrl && new AlertMailer(builtIns.smtpUrl, builtIns.smtpFrom);
  const telegram = builtIns.telegramBotToken && {
    token: builtIns.telegramBotToken,
    apiBase: builtIns.telegramApiBase,
  };

  /** The built-ins, each with the reason it is skipped when it cannot send for this account. */
  const builtInTargets = async (accountId: string): Promise<DeliveryTarget[]> => {
    const user = await users.findById(accountId);
    const chatSkip = !telegram
      ? 'not configured (TELEGRAM_BOT_TOKEN unset)'
      : !user?.telegramChatId
        ? 'not configured (no Telegram chat id in the account settings)'
        : undefined;
    return [
      {
        channelId: BUILT_IN_CHANNEL_IDS.email,
        kind: 'email',
        ...(!mailer && { skip: 'not configured (SMTP_URL unset)' }),
      },
      { channelId: BUILT_IN_CHANNEL_IDS.chat, kind: 'chat', ...(chatSkip && { skip: chatSkip }) },
    ];
  };

  /** A built-in attempt; the account and its settings are read again, as they may have changed. */
  const sendBuiltIn = async (
    accountId: string,
    channelId: string,
    payload: AlertPayload,
    deliveryId: string,
  ): Promise<Attempt> => {
    const user = await users.findById(accountId);
    if (!user) throw ApplicationFailure.nonRetryable('account deleted', DELIVERY_REJECTED);
    if (channelId === BUILT_IN_CHANNEL_IDS.email && mailer) {
      return mailer.send(user.email, payload, deliveryId);
    }
    if (channelId === BUILT_IN_CHANNEL_IDS.chat && telegram && user.telegramChatId) {
      return sendTelegram(telegram, user.telegramChatId, payload);
    }
    throw ApplicationFailure.nonRetryable(`${channelId} is not configured`, DELIVERY_REJECTED);
  };

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
      return channelIds ? targets : [...targets, ...(await builtInTargets(accountId))];
    },

    /** One attempt: check the address again, send, record the attempt, and classify the answer. */
    async deliverToChannel(input: {
      accountId: string;
      channelId: string;
      deliveryId: string;
      workflowId: string;
      payload: AlertPayloadJson;
      /** Channel kind and the alert's request id: for metrics and logs only. */
      kind?: string;
      requestId?: string;
    }): Promise<{ status: number }> {
      const { attempt: number } = Context.current().info;
      const payload = alertPayloadSchema.parse(input.payload);
      const context: DeliveryContext = {
        accountId: input.accountId,
        channelId: input.channelId,
        deliveryId: input.deliveryId,
        workflowId: input.workflowId,
        event: payload.event,
        threatEventId: payload.data.threatEventId,
      };
      const at = new Date();
      const started = performance.now();
      let attempt: Attempt;
      if (isBuiltInChannel(input.channelId)) {
        attempt = await sendBuiltIn(input.accountId, input.channelId, payload, input.deliveryId);
      } else {
        const channel = await channels.findById(input.channelId);
        if (!channel || channel.accountId !== input.accountId || channel.disabled) {
          throw ApplicationFailure.nonRetryable('channel deleted or disabled', DELIVERY_REJECTED);
        }
        let target: SafeTarget;
        try {
          target = await resolveSafeTarget(channel.url, {
            requireHttps: true,
            allowPrivate: allowPrivateTargets,
          });
        } catch (err) {
          if (!(err instanceof UnsafeTargetError)) throw err;
          await deliveries.recordAttempt(context, {
            attempt: number,
            at,
            durationMs: 0,
            status: null,
            error: err.message,
          });
          throw ApplicationFailure.nonRetryable(`unsafe target: ${err.message}`, UNSAFE_TARGET);
        }
        const { body, headers } = channelRequest(channel, payload, input.deliveryId, at);
        attempt = httpAttempt(await postOnce(target, body, headers));
      }
      await deliveries.recordAttempt(context, {
        attempt: number,
        at,
        durationMs: Math.round(performance.now() - started),
        status: attempt.status,
        error: attempt.error,
      });
      deliveryAttempts.inc({
        kind: input.kind ?? 'unknown',
        attempt: number,
        verdict: attempt.verdict,
      });
      // The request id of the HTTP request that raised the alert: one alert can be followed from
      // the API's log line to the receiver's answer.
      log.info('delivery attempt', {
        requestId: input.requestId ?? null,
        deliveryId: input.deliveryId,
        attempt: number,
        status: attempt.status,
        verdict: attempt.verdict,
      });
      if (attempt.verdict === 'delivered') return { status: attempt.status! };
      throw ApplicationFailure.create({
        message: attempt.error ?? 'delivery failed',
        type: attempt.verdict === 'retry' ? DELIVERY_RETRYABLE : DELIVERY_REJECTED,
        nonRetryable: attempt.verdict === 'give-up',
        details: [{ status: attempt.status }],
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
      deliveryOutcomes.inc({ kind: result.kind, outcome: result.outcome });
      // A skip stays in the delivery record; deliveries, successful or not, go further.
      if (result.outcome === 'skipped') return;
      if (!isBuiltInChannel(result.channelId)) {
        const failure =
          result.outcome === 'failed'
            ? { message: result.error ?? 'failed', status: result.status ?? null, at: now }
            : null;
        await channels.recordOutcome(result.channelId, now, failure);
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
        } satisfies z.output<typeof deliveryOutcomeData>,
      });
    },
  };
}
