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
import { testAlertPayload } from './payload';
import { DELIVERY_OUTCOMES } from '../../workflows/shared';

const MIN_SECRET = 16;

export const createSchema = z.object({
  kind: z.enum(CHANNEL_KINDS),
  name: z.string().trim().min(1).max(100),
  url: z.string().min(1).max(2048),
  secret: z.string().min(MIN_SECRET, `at least ${MIN_SECRET} characters`).max(256).optional(),
});

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
    }),
  ),
  createdAt: z.iso.datetime(),
  finishedAt: z.iso.datetime().nullable(),
});
export const deliveryListView = z.object({ deliveries: z.array(deliveryView) });

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
    outcome: record.outcome,
    status: record.status,
    error: record.error,
    attempts: record.attempts.map((a) => ({ ...a, at: a.at.toISOString() })),
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
    const body = createSchema.parse(req.body);
    if (body.kind === 'webhook' && !body.secret)
      throw new AppError(422, 'secret: Required for a generic webhook');
    if (body.kind !== 'webhook' && body.secret)
      throw new AppError(422, 'secret: only generic webhooks are signed');
    await checkUrl(body.url);
    const channel = await channels.create(
      {
        accountId: sessionOf(res).userId,
        kind: body.kind,
        name: body.name,
        url: body.url,
        secret: body.secret ?? null,
      },
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
    if (changes.secret && channel.kind !== 'webhook') {
      throw new AppError(422, 'secret: only generic webhooks are signed');
    }
    if (changes.url) await checkUrl(changes.url);
    const updated = await channels.update(channel.accountId, channel.id, changes, clock());
    if (!updated) throw new AppError(404, `No alert channel ${channel.id}`);
    res.json(describe(updated));
  });

  /** Also for the built-ins (`builtin:email`, `builtin:chat`), which every account has. */
  router.get('/:channel_id/deliveries', async (req, res) => {
    const { channel_id: channelId } = req.params;
    const accountId = isBuiltInChannel(channelId)
      ? sessionOf(res).userId
      : (await owned(res, channelId)).accountId;
    const records = await deliveries.listForChannel(accountId, channelId, 50);
    res.json({
      deliveries: records.map(describeDelivery),
    } satisfies z.output<typeof deliveryListView>);
  });

  /** Sends a synthetic `canary.test_alert` through the real workflow and answers its outcome. */
  router.post('/:channel_id/test', async (req, res) => {
    const channel = await owned(res, req.params.channel_id);
    const release = await testSlots.acquire(requestIdOf(req));
    if (!release) {
      throw new AppError(
        429,
        `Too many channel tests are running: none came free within ${CHANNEL_TEST_WAIT_MS / 1000} s and nothing was sent. Retry in a minute.`,
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
