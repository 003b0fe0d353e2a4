import type { Response } from 'express';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Clock } from '../clock';
import { findOwned } from '../auth/caller';
import { DomainError } from '../errors';
import { operationsFor } from '../http/operation';
import { sessionOf } from '../auth/session-auth';
import { resolveSafeTarget, UnsafeTargetError, type TargetPolicy } from './address-safety';
import { requestIdOf } from '../http/request-id';
import type { Temporal } from '../temporal/client';
import { runChannelTest } from './alert-workflows';
import { isBuiltInChannel } from './built-in-channels';
import { CHANNEL_TEST_WAIT_MS, type ChannelTestSlots } from './channel-test-slots';
import { CHANNEL_KINDS, type AlertChannel, type ChannelsRepository } from './channels.repository';
import type { DeliveriesRepository, DeliveryRecord } from './deliveries.repository';
import { ALERT_EVENTS, ALERT_LEVELS, testAlertPayload } from './payload';
import { CHANNEL_PROVIDERS } from './providers';
import type { Resends } from './resends';
import { DELIVERY_OUTCOMES } from '../../workflows/shared';

const MIN_SECRET = 16;

const routing = {
  /** The event kinds the channel receives; null (the default) for all. */
  events: z.array(z.enum(ALERT_EVENTS)).min(1).nullable(),
  /** The lowest alert level the channel receives; null (the default) for all. */
  minLevel: z.enum(ALERT_LEVELS).nullable(),
  /**
   * Generic webhooks: also send Standard Webhooks headers, so receivers can verify with those
   * libraries in any language (on by default for a new webhook channel).
   */
  standardWebhooks: z.boolean(),
};

export const createSchema = z.object({
  kind: z.enum(CHANNEL_KINDS),
  name: z.string().trim().min(1).max(100),
  url: z.string().min(1).max(2048),
  secret: z.string().min(MIN_SECRET, `at least ${MIN_SECRET} characters`).max(256).optional(),
  ...z.object(routing).partial().shape,
});

const rotateSchema = z.object({
  secret: z.string().min(MIN_SECRET, `at least ${MIN_SECRET} characters`).max(256).optional(),
  /** How long the old secret stays valid (0: not at all). */
  overlapHours: z.number().int().min(0).max(168).default(24),
});

const SECRET_KINDS = CHANNEL_KINDS.filter((k) => CHANNEL_PROVIDERS[k].secret === 'required');

/** Each kind's provider says whether its channels have a secret; only webhooks take Standard Webhooks headers. */
function checkKindFields(
  kind: (typeof CHANNEL_KINDS)[number],
  fields: { secret?: string | null; standardWebhooks?: boolean },
  creating: boolean,
) {
  const provider = CHANNEL_PROVIDERS[kind];
  if (creating && provider.secret === 'required' && !fields.secret) {
    throw new DomainError(
      'invalid',
      `secret: Required for a ${kind} channel (${provider.secretLabel})`,
    );
  }
  if (provider.secret === 'none' && fields.secret) {
    throw new DomainError(
      'invalid',
      `secret: only ${SECRET_KINDS.join(' and ')} channels have a secret`,
    );
  }
  if (kind !== 'webhook' && fields.standardWebhooks) {
    throw new DomainError('invalid', 'standardWebhooks: only generic webhooks are signed');
  }
}

/** `POST …/deliveries/resend-failed`: every failed delivery since this instant. */
export const bulkResendSchema = z.object({ since: z.iso.datetime() }).strict();

/** The same fields (the kind is fixed once created), each optional, plus enable/disable. */
export const updateSchema = createSchema
  .omit({ kind: true })
  .extend({ disabled: z.boolean() })
  .partial()
  .strict();

/** The channel as the API shows it: the secret is write-only. */
export const channelView = z
  .object({
    id: z.string(),
    kind: z.enum(CHANNEL_KINDS),
    name: z.string(),
    url: z.string(),
    hasSecret: z.boolean(),
    disabled: z.boolean(),
    ...routing,
    lastError: z
      .object({ message: z.string(), status: z.number().int().nullable(), at: z.iso.datetime() })
      .nullable(),
    /**
     * The channel's last successful delivery, to within a minute: a healthy channel's is refreshed
     * at most once a minute (each delivery's own time is on its record).
     */
    lastDeliveryAt: z.iso.datetime().nullable(),
    /** The first failed delivery since the channel last delivered (or was enabled); null while it delivers. */
    failingSince: z.iso.datetime().nullable(),
    /**
     * Why the service disabled the channel itself (its deliveries kept failing for
     * `CHANNEL_DISABLE_AFTER`), and when; null otherwise. Enabling the channel clears both.
     */
    disabledReason: z.string().nullable(),
    disabledAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'AlertChannel' });
export const rotatedView = z
  .object({
    channel: channelView,
    /** Only when the service made the secret: shown this once. */
    secret: z.string().optional(),
    previousSecretValidUntil: z.iso.datetime(),
  })
  .meta({ id: 'RotatedSecret' });
export const channelListView = z
  .object({ channels: z.array(channelView) })
  .meta({ id: 'AlertChannelList' });

function describe(channel: AlertChannel): z.output<typeof channelView> {
  return {
    id: channel.id,
    kind: channel.kind,
    name: channel.name,
    url: channel.url,
    hasSecret: channel.secret !== null,
    disabled: channel.disabled,
    events: channel.events,
    minLevel: channel.minLevel,
    standardWebhooks: channel.standardWebhooks,
    lastError: channel.lastError && {
      ...channel.lastError,
      at: channel.lastError.at.toISOString(),
    },
    lastDeliveryAt: channel.lastDeliveryAt?.toISOString() ?? null,
    failingSince: channel.failingSince?.toISOString() ?? null,
    disabledReason: channel.disabledReason,
    disabledAt: channel.disabledAt?.toISOString() ?? null,
    createdAt: channel.createdAt.toISOString(),
  };
}

export const deliveryView = z
  .object({
    deliveryId: z.string(),
    workflowId: z.string(),
    event: z.string(),
    threatEventId: z.string().nullable(),
    /** A resend: the delivery id receivers saw first (and see again); null otherwise. */
    resendOf: z.string().nullable(),
    outcome: z.enum(DELIVERY_OUTCOMES).nullable(),
    status: z.number().int().nullable(),
    error: z.string().nullable(),
    attempts: z.array(
      z.object({
        attempt: z.number().int(),
        at: z.iso.datetime(),
        durationMs: z.number().int(),
        status: z.number().int().nullable(),
        error: z.string().nullable(),
        /** The start of the receiver's answer: its first 1 KB and content type; null when none came. */
        answer: z.object({ contentType: z.string().nullable(), body: z.string() }).nullable(),
      }),
    ),
    createdAt: z.iso.datetime(),
    finishedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Delivery' });
export const deliveryListView = z
  .object({ deliveries: z.array(deliveryView) })
  .meta({ id: 'DeliveryList' });

const resentView = z
  .object({
    deliveryId: z.string(),
    workflowId: z.string(),
    resendOf: z.string(),
  })
  .meta({ id: 'ResentDelivery' });
export const resendView = resentView;
export const bulkResendView = z
  .object({ resent: z.array(resentView), more: z.boolean() })
  .meta({ id: 'ResentDeliveries' });

/** A channel test's outcome, as the alert workflow reports it (absent fields stay absent). */
export const channelTestView = z
  .object({
    channelId: z.string(),
    kind: z.string(),
    deliveryId: z.string(),
    outcome: z.enum(DELIVERY_OUTCOMES),
    status: z.number().int().nullable().optional(),
    error: z.string().optional(),
  })
  .meta({ id: 'ChannelTestOutcome' });

export function describeDelivery(record: DeliveryRecord): z.output<typeof deliveryView> {
  return {
    deliveryId: record.id,
    workflowId: record.workflowId,
    event: record.event,
    threatEventId: record.threatEventId,
    resendOf: record.resendOf ?? null,
    outcome: record.outcome,
    status: record.status,
    error: record.error,
    attempts: record.attempts.map((a) => ({
      attempt: a.attempt,
      at: a.at.toISOString(),
      durationMs: a.durationMs,
      status: a.status,
      error: a.error,
      answer: a.answer ?? null,
    })),
    createdAt: record.createdAt.toISOString(),
    finishedAt: record.finishedAt?.toISOString() ?? null,
  };
}

export interface ChannelRoutesDeps {
  channels: ChannelsRepository;
  testSlots: ChannelTestSlots;
  deliveries: DeliveriesRepository;
  resends: Resends;
  temporal: Temporal;
  clock: Clock;
  targets: Pick<TargetPolicy, 'allowPrivate' | 'deny' | 'lookup'>;
}

async function checkUrl(targets: ChannelRoutesDeps['targets'], url: string) {
  try {
    await resolveSafeTarget(url, { ...targets, requireHttps: true });
  } catch (err) {
    if (err instanceof UnsafeTargetError) throw new DomainError('invalid', `url: ${err.message}`);
    throw err;
  }
}

const owned = (channels: ChannelsRepository, res: Response, channelId: string) =>
  findOwned(res, channels, channelId, `alert channel ${channelId}`);

/** The channel's account; the built-ins (`builtin:email`, `builtin:chat`) are every account's. */
const accountOf = async (channels: ChannelsRepository, res: Response, channelId: string) =>
  isBuiltInChannel(channelId)
    ? sessionOf(res).userId
    : (await owned(channels, res, channelId)).accountId;

const operation = operationsFor<ChannelRoutesDeps>('Alert channels');

/** `/api/alert-channels` (session): manage the account's chat and webhook channels. */
export const channelOperations = [
  operation({
    operationId: 'createAlertChannel',
    method: 'post',
    path: '/api/alert-channels',
    summary: 'Add an alert channel',
    auth: 'session',
    body: createSchema,
    success: { status: 201, description: 'The channel' },
    response: channelView,
    examples: {
      body: {
        kind: 'webhook',
        name: 'my receiver',
        url: 'https://alerts.example.com/hook',
        secret: 'a-secret-of-at-least-16-chars',
      },
    },
    handler: async ({ body: { secret, ...body }, res }, { channels, clock, targets }) => {
      checkKindFields(body.kind, { secret, standardWebhooks: body.standardWebhooks }, true);
      await checkUrl(targets, body.url);
      const channel = await channels.create(
        {
          accountId: sessionOf(res).userId,
          ...body,
          standardWebhooks: body.standardWebhooks ?? body.kind === 'webhook',
          secret: secret ?? null,
        },
        clock(),
      );
      return describe(channel);
    },
  }),
  operation({
    operationId: 'listAlertChannels',
    method: 'get',
    path: '/api/alert-channels',
    summary: 'Alert channels',
    auth: 'session',
    success: { status: 200, description: '`{channels}`' },
    response: channelListView,
    handler: async ({ res }, { channels }) => ({
      channels: (await channels.list(sessionOf(res).userId)).map(describe),
    }),
  }),
  operation({
    operationId: 'getAlertChannel',
    method: 'get',
    path: '/api/alert-channels/{channel_id}',
    summary: 'One channel',
    auth: 'session',
    success: { status: 200, description: 'The channel' },
    response: channelView,
    handler: async ({ params, res }, { channels }) =>
      describe(await owned(channels, res, params.channel_id!)),
  }),
  operation({
    operationId: 'updateAlertChannel',
    method: 'patch',
    path: '/api/alert-channels/{channel_id}',
    summary: 'Change, enable or disable a channel',
    description:
      'Enabling a channel (`disabled: false`) clears `disabledReason` and `disabledAt` and restarts its failing clock (`failingSince`).',
    auth: 'session',
    body: updateSchema,
    success: { status: 200, description: 'The channel' },
    response: channelView,
    examples: { body: { disabled: true } },
    handler: async ({ body: changes, params, res }, { channels, clock, targets }) => {
      const channel = await owned(channels, res, params.channel_id!);
      checkKindFields(channel.kind, changes, false);
      if (changes.url) await checkUrl(targets, changes.url);
      const updated = await channels.update(channel.accountId, channel.id, changes, clock());
      if (!updated) throw new DomainError('not_found', `No alert channel ${channel.id}`);
      return describe(updated);
    },
  }),
  operation({
    operationId: 'rotateAlertChannelSecret',
    method: 'post',
    path: '/api/alert-channels/{channel_id}/rotate-secret',
    summary: "Rotate a webhook channel's signing secret, the old one kept valid for an overlap",
    description:
      'Takes a new secret, or makes one (returned once, in `secret`). Until `previousSecretValidUntil` deliveries verify with either secret: `X-Service-Signature` stays signed with the old one (it holds one signature), `webhook-signature` carries one for each.',
    auth: 'session',
    body: rotateSchema,
    success: { status: 200, description: 'The channel, and the secret when one was made' },
    response: rotatedView,
    examples: { body: { overlapHours: 24 } },
    handler: async ({ body, params, res }, { channels, clock }) => {
      const channel = await owned(channels, res, params.channel_id!);
      if (channel.kind !== 'webhook') {
        throw new DomainError('invalid', 'only generic webhook channels sign with a secret');
      }
      const made = body.secret ? null : randomBytes(32).toString('base64url');
      const now = clock();
      const until = new Date(now.getTime() + body.overlapHours * 3_600_000);
      const rotated = await channels.rotateSecret(channel, body.secret ?? made!, until, now);
      if (!rotated) throw new DomainError('conflict', 'the secret changed meanwhile: try again');
      return {
        channel: describe(rotated),
        ...(made && { secret: made }),
        previousSecretValidUntil: until.toISOString(),
      };
    },
  }),
  operation({
    operationId: 'deleteAlertChannel',
    method: 'delete',
    path: '/api/alert-channels/{channel_id}',
    summary: 'Delete a channel',
    auth: 'session',
    success: { status: 204, description: 'Done, no body' },
    handler: async ({ params, res }, { channels }) => {
      const channel = await owned(channels, res, params.channel_id!);
      await channels.remove(channel.accountId, channel.id);
    },
  }),
  operation({
    operationId: 'listDeliveries',
    method: 'get',
    path: '/api/alert-channels/{channel_id}/deliveries',
    summary: "A channel's latest deliveries",
    description: "The channel's latest 50 deliveries, with every attempt.",
    auth: 'session',
    success: { status: 200, description: '`{deliveries}`' },
    response: deliveryListView,
    handler: async ({ params, res }, { channels, deliveries }) => {
      const channelId = params.channel_id!;
      const accountId = await accountOf(channels, res, channelId);
      const records = await deliveries.listForChannel(accountId, channelId, 50);
      return { deliveries: records.map(describeDelivery) };
    },
  }),
  /** Sends one recorded delivery again: same payload and delivery id, freshly signed. */
  operation({
    operationId: 'resendDelivery',
    method: 'post',
    path: '/api/alert-channels/{channel_id}/deliveries/{delivery_id}/resend',
    summary: 'Send a recorded delivery again (same payload and delivery id, freshly signed)',
    description:
      'Through a new workflow: the same payload to this channel, signed at send time, with the first delivery id in `X-Service-Delivery`.',
    auth: 'session',
    success: { status: 202, description: 'The new delivery `{deliveryId, workflowId, resendOf}`' },
    response: resendView,
    errors: { 409: 'Still being attempted, or recorded without its payload' },
    handler: async ({ params, req, res }, { channels, resends }) => {
      const channelId = params.channel_id!;
      const accountId = await accountOf(channels, res, channelId);
      return resends.one(accountId, channelId, params.delivery_id!, requestIdOf(req));
    },
  }),
  /** Sends every failed delivery since `since` again (recovering from a receiver's outage). */
  operation({
    operationId: 'resendFailedDeliveries',
    method: 'post',
    path: '/api/alert-channels/{channel_id}/deliveries/resend-failed',
    summary: 'Send every failed delivery since an instant again (at most 100 a call)',
    description:
      'Every alert whose delivery to this channel failed since then, once each, oldest first; `more` says to call again. Alerts delivered since (by a resend) are left alone.',
    auth: 'session',
    body: bulkResendSchema,
    success: { status: 202, description: '`{resent, more}`' },
    response: bulkResendView,
    examples: { body: { since: '2026-01-01T00:00:00.000Z' } },
    handler: async ({ body, params, req, res }, { channels, resends }) => {
      const channelId = params.channel_id!;
      const accountId = await accountOf(channels, res, channelId);
      return resends.failedSince(accountId, channelId, new Date(body.since), requestIdOf(req));
    },
  }),
  /** Sends a synthetic `canary.test_alert` through the real workflow and answers its outcome. */
  operation({
    operationId: 'testAlertChannel',
    method: 'post',
    path: '/api/alert-channels/{channel_id}/test',
    summary: 'Send a test alert through the real workflow',
    auth: 'session',
    success: { status: 200, description: 'The outcome' },
    response: channelTestView,
    errors: { 429: 'Too many channel tests of this account running' },
    handler: async ({ params, req, res }, { channels, testSlots, temporal, clock }) => {
      const channel = await owned(channels, res, params.channel_id!);
      const release = await testSlots.acquire(channel.accountId, requestIdOf(req));
      if (!release) {
        throw new DomainError(
          'rate_limited',
          `Too many channel tests of this account are running: none came free within ${CHANNEL_TEST_WAIT_MS / 1000} s and nothing was sent. Retry in a minute.`,
          60,
        );
      }
      let results;
      try {
        ({ results } = await runChannelTest(temporal, {
          accountId: channel.accountId,
          channelId: channel.id,
          payload: testAlertPayload(clock()),
          requestId: requestIdOf(req),
        }));
      } finally {
        await release();
      }
      const [result] = results;
      if (!result) throw new DomainError('not_found', `No alert channel ${channel.id}`);
      return result;
    },
  }),
];
