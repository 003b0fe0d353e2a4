import { createHash } from 'node:crypto';
import type { z } from 'zod';
import {
  CHANNEL_DISABLED_KIND,
  DELIVERY_OUTCOME_KIND,
  type channelDisabledData,
  type deliveryOutcomeData,
} from '../evidence/trail/audit-trail';
import type { EvidenceInput, EvidenceStore } from '../evidence/evidence.store';
import { derivedTimeOrderedId } from '../ids';
import { deliveryOutcomes } from '../metrics';
import type { AlertPayloadJson, AttemptReport, ChannelResult } from '../../workflows/shared';
import { isBuiltInChannel } from './built-in-channels';
import type { AlertChannel, ChannelsRepository, DisabledChannel } from './channels.repository';
import { CHANNEL_DISABLED_EVENT, type ChannelDisabledPayload } from './payload';
import type {
  DeliveriesRepository,
  DeliveryAttempt,
  DeliveryContext,
} from './deliveries.repository';

/** What every outcome record of one alert shares. */
export interface AlertContext {
  accountId: string;
  workflowId: string;
  event: string;
  threatEventId: string | null;
  /** Kept on the record so it can be sent again. */
  payload: AlertPayloadJson;
  resendOf: string | null;
  /** The recovery round these outcomes come from (0 or absent: the first delivery). */
  recovery?: number;
}

export function attemptRecord(report: AttemptReport): DeliveryAttempt {
  return {
    attempt: report.attempt,
    at: new Date(report.at),
    durationMs: report.durationMs,
    status: report.status,
    error: report.error,
    answer: report.answer,
  };
}

/**
 * The evidence log id of a delivery's sealed outcome: fixed, so a retried record seals it once, and
 * ordered by the alert's `sentAt` (fixed in its payload), so outcomes are written next to each
 * other in the log's B-trees.
 */
export const outcomeLogId = (deliveryId: string, sentAt: string, recovery = 0) =>
  derivedTimeOrderedId(
    'evd',
    new Date(sentAt),
    recovery ? `${deliveryId}:recovery-${recovery}` : deliveryId,
  );

/** The evidence log id of a sealed entry that follows from one outcome record (`by`). */
const derivedLogId = (by: string, what: string) =>
  `evd_${createHash('sha256').update(`${by}:${what}`).digest('base64url').slice(0, 16)}`;

/** `5d`, `36h`, `90s`: a duration as the settings write it. */
function asSetting(ms: number): string {
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
  ];
  const [unit, size] = units.find(([, size]) => ms % size === 0) ?? ['s', 1_000];
  return `${Math.round(ms / size)}${unit}`;
}

/**
 * Endpoint health: a channel failing for `disableAfterMs` with nothing delivered is disabled, and
 * the account told through its other channels by `notify` (which starts a notice's workflow,
 * once per `noticeId`).
 */
export interface ChannelHealth {
  disableAfterMs: number;
  notify: (notice: {
    accountId: string;
    payload: ChannelDisabledPayload;
    noticeId: string;
  }) => Promise<void>;
}

/** The notice a disabled channel's account gets. */
export function channelDisabledPayload(channel: AlertChannel, now: Date): ChannelDisabledPayload {
  return {
    version: '1',
    event: CHANNEL_DISABLED_EVENT,
    sentAt: now.toISOString(),
    data: {
      event: CHANNEL_DISABLED_EVENT,
      channelId: channel.id,
      channelKind: channel.kind,
      channelName: channel.name,
      reason: channel.disabledReason ?? 'disabled',
      disabledAt: (channel.disabledAt ?? now).toISOString(),
      failingSince: (channel.failingSince ?? now).toISOString(),
      lastDeliveryAt: channel.lastDeliveryAt?.toISOString() ?? null,
      lastError: channel.lastError && {
        message: channel.lastError.message,
        status: channel.lastError.status,
      },
      threatEventId: null,
    },
  };
}

/**
 * Where an alert's deliveries are recorded: each attempt on its delivery record, and once every
 * channel is done, the outcomes on the delivery records, each channel's last error, and the audit
 * trail in the account's evidence log.
 */
export class AlertOutcomes {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly channels: ChannelsRepository,
    private readonly evidence: EvidenceStore,
    /** Absent: channels are never disabled on their own (benchmarks). */
    private readonly health?: ChannelHealth,
  ) {}

  /** Idempotent per attempt number. */
  recordAttempt(context: DeliveryContext, report: AttemptReport): Promise<void> {
    return this.deliveries.recordAttempt(context, attemptRecord(report));
  }

  /**
   * Every outcome of an alert, skips included. The delivery records, the channels' state and the
   * sealed outcomes are independent writes, each idempotent (so a retried record repeats them
   * safely): they go at once. A skip stays in the delivery record; deliveries, successful or not,
   * go further: one write for every channel's state, one sealed append for every outcome.
   */
  async record(
    alert: AlertContext,
    results: ChannelResult[],
    /** By delivery id: the last attempt's report, not recorded yet. */
    lastAttempts: Record<string, AttemptReport>,
    {
      sealWith = [],
      read,
    }: {
      /** Sealed first in the same append (a threat alert's own entry): one synced write for all. */
      sealWith?: EvidenceInput[];
      /** The channels as read for these deliveries: a healthy one may need no write. */
      read?: (channelId: string) => AlertChannel | null;
    } = {},
  ): Promise<void> {
    const { accountId, workflowId, event, threatEventId, payload, resendOf, recovery } = alert;
    const now = new Date();
    const sent = results.filter((result) => result.outcome !== 'skipped');
    const logIdOf = (result: ChannelResult) =>
      outcomeLogId(result.deliveryId, payload.sentAt, recovery);
    await Promise.all([
      this.deliveries.recordOutcomes(
        results.map((result) => {
          const last = lastAttempts[result.deliveryId];
          return {
            context: {
              accountId,
              channelId: result.channelId,
              deliveryId: result.deliveryId,
              workflowId,
              event,
              threatEventId,
            },
            result,
            ...(last && { lastAttempt: attemptRecord(last) }),
          };
        }),
        now,
        { payload, resendOf },
      ),
      this.channels.recordOutcomes(
        sent
          .filter((result) => !isBuiltInChannel(result.channelId))
          .map((result) => ({
            channelId: result.channelId,
            read: read?.(result.channelId),
            error:
              result.outcome === 'failed'
                ? { message: result.error ?? 'failed', status: result.status ?? null, at: now }
                : null,
          })),
        now,
      ),
      this.evidence.appendMany(accountId, [
        ...sealWith,
        ...sent.map((result) => ({
          logId: logIdOf(result),
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
        })),
      ]),
    ]);
    for (const result of results) {
      deliveryOutcomes.inc({ kind: result.kind, outcome: result.outcome });
    }
    await Promise.all(
      sent
        .filter((result) => result.outcome === 'failed' && !isBuiltInChannel(result.channelId))
        .map((result) => this.disableIfFailingTooLong(accountId, result, logIdOf(result), now)),
    );
  }

  /**
   * After a failure is recorded: a channel failing since before the window, with nothing
   * delivered, is disabled (one conditional write, so once however many workers record
   * failures), then the audit entry is sealed and the notice started, each named after this
   * record so a retried record repeats neither.
   */
  private async disableIfFailingTooLong(
    accountId: string,
    failed: ChannelResult,
    /** The failure's sealed outcome, which the disabling names. */
    outcome: string,
    now: Date,
  ): Promise<void> {
    if (!this.health) return;
    const { disableAfterMs, notify } = this.health;
    const disabled = await this.channels.disableFailing(
      failed.channelId,
      new Date(now.getTime() - disableAfterMs),
      `its deliveries kept failing for longer than ${asSetting(disableAfterMs)} with nothing delivered (CHANNEL_DISABLE_AFTER)`,
      outcome,
      now,
    );
    if (!disabled) return;
    await Promise.all([
      this.evidence.append(accountId, disabledEntry(disabled, failed)),
      notify({
        accountId,
        payload: channelDisabledPayload(disabled.channel, now),
        noticeId: `${disabled.channel.id}-${disabled.disabledBy}`,
      }),
    ]);
  }
}

function disabledEntry({ channel, disabledBy }: DisabledChannel, failed: ChannelResult) {
  return {
    logId: derivedLogId(disabledBy, 'channel-disabled'),
    kind: CHANNEL_DISABLED_KIND,
    data: {
      at: (channel.disabledAt ?? new Date()).toISOString(),
      channel_id: channel.id,
      channel_kind: channel.kind,
      channel_name: channel.name,
      reason: channel.disabledReason ?? 'disabled',
      failing_since: (channel.failingSince ?? new Date()).toISOString(),
      last_delivery_at: channel.lastDeliveryAt?.toISOString() ?? null,
      delivery_id: failed.deliveryId,
      error: failed.error ?? null,
    } satisfies z.output<typeof channelDisabledData>,
  };
}
