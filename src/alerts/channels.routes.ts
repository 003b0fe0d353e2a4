import { Router, type Response } from 'express';
import { z } from 'zod';
import type { Clock } from '../clock';
import { ownedByCaller } from '../http/caller';
import { AppError } from '../http/errors';
import { sessionOf } from '../http/session-auth';
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
import { Resends } from './resends';
import { DELIVERY_OUTCOMES } from '../../workflows/shared';

const MIN_SECRET = 16;

const routing = {
  /** The event kinds the channel receives; null (the default) for all. */
  events: z.array(z.enum(ALERT_EVENTS)).min(1).nullable(),
  /** The lowest alert level the channel receives; null (the default) for all. */
  minLevel: z.enum(ALERT_LEVELS).nullable(),
  /** Generic webhooks: also send Standard Webhooks headers. */
  standardWebhooks: z.boolean(),
};

export const createSchema = z.object({
  kind: z.enum(CHANNEL_KINDS),
  name: z.string().trim().min(1).max(100),
  url: z.string().min(1).max(2048),
  secret: z.string().min(MIN_SECRET, `at least ${MIN_SECRET} characters`).max(256).optional(),
  ...z.object(routing).partial().shape,
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
    throw new AppError(422, `secret: Required for a ${kind} channel (${provider.secretLabel})`);
  }
  if (provider.secret === 'none' && fields.secret) {
    throw new AppError(422, `secret: only ${SECRET_KINDS.join(' and ')} channels have a secret`);
  }
  if (kind !== 'webhook' && fields.standardWebhooks) {
    throw new AppError(422, 'standardWebhooks: only generic webhooks are signed');
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
export const channelView = z.object({
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
  lastDeliveryAt: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
});
export const channelListView = z.object({ channels: z.array(channelView) });

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
    createdAt: channel.createdAt.toISOString(),
  };
}

interface ChannelRoutesDeps {
  channels: ChannelsRepository;
  testSlots: ChannelTestSlots;
  deliveries: DeliveriesRepository;
  temporal: Temporal;
  clock: Clock;
  targets: Pick<TargetPolicy, 'allowPrivate' | 'lookup'>;
}

export const deliveryView = z.object({
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
});
export const deliveryListView = z.object({ deliveries: z.array(deliveryView) });

const resentView = z.object({
  deliveryId: z.string(),
  workflowId: z.string(),
  resendOf: z.string(),
});
export const resendView = resentView;
export const bulkResendView = z.object({ resent: z.array(resentView), more: z.boolean() });

/** A channel test's outcome, as the alert workflow reports it (absent fields stay absent). */
export const channelTestView = z.object({
  channelId: z.string(),
  kind: z.string(),
  deliveryId: z.string(),
  outcome: z.enum(DELIVERY_OUTCOMES),
  status: z.number().int().nullable().optional(),
  error: z.string().optional(),
});

function describeDelivery(record: DeliveryRecord): z.output<typeof deliveryView> {
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

/** `/api/alert-channels` (session): manage the account's chat and webhook channels. */
export function channelsRoutes({
  channels,
  testSlots,
  deliveries,
  temporal,
  clock,
  targets,
}: ChannelRoutesDeps): Router {
  const router = Router();
  const resends = new Resends(deliveries, temporal);

  const checkUrl = async (url: string) => {
    try {
      await resolveSafeTarget(url, { ...targets, requireHttps: true });
    } catch (err) {
      if (err instanceof UnsafeTargetError) throw new AppError(422, `url: ${err.message}`);
      throw err;
    }
  };
  const owned = async (res: Response, channelId: string) =>
    ownedByCaller(res, await channels.findById(channelId), `alert channel ${channelId}`);

  router.post('/', async (req, res) => {
    const { secret, ...body } = createSchema.parse(req.body);
    checkKindFields(body.kind, { secret, standardWebhooks: body.standardWebhooks }, true);
    await checkUrl(body.url);
    const channel = await channels.create(
      { accountId: sessionOf(res).userId, ...body, secret: secret ?? null },
      clock(),
    );
    res.status(201).json(describe(channel));
  });

  router.get('/', async (_req, res) => {
    const list = await channels.list(sessionOf(res).userId);
    res.json({ channels: list.map(describe) } satisfies z.output<typeof channelListView>);
  });

  router.get('/:channel_id', async (req, res) => {
    res.json(describe(await owned(res, req.params.channel_id)));
  });

  router.patch('/:channel_id', async (req, res) => {
    const changes = updateSchema.parse(req.body);
    const channel = await owned(res, req.params.channel_id);
    checkKindFields(channel.kind, changes, false);
    if (changes.url) await checkUrl(changes.url);
    const updated = await channels.update(channel.accountId, channel.id, changes, clock());
    if (!updated) throw new AppError(404, `No alert channel ${channel.id}`);
    res.json(describe(updated));
  });

  /** The channel's account; the built-ins (`builtin:email`, `builtin:chat`) are every account's. */
  const accountOf = async (res: Response, channelId: string) =>
    isBuiltInChannel(channelId) ? sessionOf(res).userId : (await owned(res, channelId)).accountId;

  router.get('/:channel_id/deliveries', async (req, res) => {
    const { channel_id: channelId } = req.params;
    const accountId = await accountOf(res, channelId);
    const records = await deliveries.listForChannel(accountId, channelId, 50);
    res.json({
      deliveries: records.map(describeDelivery),
    } satisfies z.output<typeof deliveryListView>);
  });

  /** Sends every failed delivery since `since` again (recovering from a receiver's outage). */
  router.post('/:channel_id/deliveries/resend-failed', async (req, res) => {
    const { since } = bulkResendSchema.parse(req.body);
    const { channel_id: channelId } = req.params;
    const accountId = await accountOf(res, channelId);
    const answer = await resends.failedSince(
      accountId,
      channelId,
      new Date(since),
      requestIdOf(req),
    );
    res.status(202).json(answer satisfies z.output<typeof bulkResendView>);
  });

  /** Sends one recorded delivery again: same payload and delivery id, freshly signed. */
  router.post('/:channel_id/deliveries/:delivery_id/resend', async (req, res) => {
    const { channel_id: channelId, delivery_id: deliveryId } = req.params;
    const accountId = await accountOf(res, channelId);
    const resent = await resends.one(accountId, channelId, deliveryId, requestIdOf(req));
    res.status(202).json(resent satisfies z.output<typeof resendView>);
  });

  /** Sends a synthetic `canary.test_alert` through the real workflow and answers its outcome. */
  router.post('/:channel_id/test', async (req, res) => {
    const channel = await owned(res, req.params.channel_id);
    const release = await testSlots.acquire(channel.accountId, requestIdOf(req));
    if (!release) {
      throw new AppError(
        429,
        `Too many channel tests of this account are running: none came free within ${CHANNEL_TEST_WAIT_MS / 1000} s and nothing was sent. Retry in a minute.`,
        { 'Retry-After': '60' },
      );
    }
    let results;
    try {
      ({ results } = await runChannelTest(temporal, {
        accountId: channel.accountId,
        channelIds: [channel.id],
        payload: testAlertPayload(clock()),
        requestId: requestIdOf(req),
      }));
    } finally {
      await release();
    }
    const [result] = results;
    if (!result) throw new AppError(404, `No alert channel ${channel.id}`);
    res.json(result satisfies z.output<typeof channelTestView>);
  });

  router.delete('/:channel_id', async (req, res) => {
    const channel = await owned(res, req.params.channel_id);
    await channels.remove(channel.accountId, channel.id);
    res.status(204).end();
  });

  return router;
}
