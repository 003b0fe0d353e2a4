import type { RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { Clock } from '../clock';
import { DomainError } from '../errors';
import { callerAccountId, findOwned } from '../auth/caller';
import { operationsFor } from '../http/operation';
import type { CanariesRepository, Canary } from './canaries.repository';
import type { DecoySettings } from './decoys';
import { CANARY_KINDS, KINDS, makeDecoy } from './kinds';

/** Fields a planting request may add, and the kinds that take each (required where marked). */
const PLANT_OPTIONS = {
  redirect_url: { kinds: ['fast_redirect', 'slow_redirect'], required: true },
  site_url: { kinds: ['cloned_website'], required: true },
  image: { kinds: ['web_image'], required: false },
} as const satisfies Record<string, { kinds: readonly string[]; required: boolean }>;

/** Images a web_image canary serves, by their first bytes. */
const IMAGE_SIGNATURES = ['iVBORw0KGgo', 'R0lGOD', '/9j/'];

const httpUrl = z.url({ protocol: /^https?$/ }).max(2000);

export const plantSchema = z
  .object({
    kind: z.enum(CANARY_KINDS),
    memo: z.string().trim().max(500).default(''),
    platform: z.string().trim().min(1).max(100).optional(),
    redirect_url: httpUrl.optional(),
    site_url: httpUrl.optional(),
    image: z
      .base64()
      .max(140_000, 'at most 100 KB of image (140,000 base64 characters)')
      .refine((image) => IMAGE_SIGNATURES.some((s) => image.startsWith(s)), {
        message: 'must be a PNG, GIF or JPEG image, base64-encoded',
      })
      .optional(),
  })
  .strict()
  .superRefine((body, ctx) => {
    for (const [field, rule] of Object.entries(PLANT_OPTIONS)) {
      const given = body[field as keyof typeof PLANT_OPTIONS] !== undefined;
      const takes = (rule.kinds as readonly string[]).includes(body.kind);
      if (given && !takes) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `only for kind ${rule.kinds.join(' or ')}`,
        });
      } else if (!given && takes && rule.required) {
        ctx.addIssue({ code: 'custom', path: [field], message: `required for kind ${body.kind}` });
      }
    }
  });

/** `secret` only for kinds that come as a pair (the cloud key's secret half). */
export const canaryView = z
  .object({
    canary_id: z.string(),
    kind: z.enum(CANARY_KINDS),
    memo: z.string(),
    platform: z.string().nullable(),
    value: z.string(),
    secret: z.string().optional(),
    /** Files to plant as they are (the cloud key's AWS profile). */
    files: z.array(z.object({ path: z.string(), content: z.string() })).optional(),
    /** The file to plant, for the kinds that come as one: download it at `url`. */
    artifact: z
      .object({ filename: z.string(), content_type: z.string(), url: z.string() })
      .optional(),
    /** fast_redirect / slow_redirect: where a visitor is sent after the hit. */
    redirect_url: z.string().optional(),
    how_to_use: z.string(),
    created_at: z.iso.datetime(),
    age_days: z.number().int(),
    retired_at: z.iso.datetime().nullable(),
    hit_count: z.number().int(),
    last_hit_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Canary' });
export const canaryListView = z
  .object({ canaries: z.array(canaryView) })
  .meta({ id: 'CanaryList' });

export function describeCanary(canary: Canary, now: Date): z.output<typeof canaryView> {
  return {
    canary_id: canary.id,
    kind: canary.kind,
    memo: canary.memo,
    platform: canary.platform,
    value: canary.value,
    ...(canary.secret && { secret: canary.secret }),
    ...(canary.files && { files: canary.files }),
    ...(canary.artifact && {
      artifact: {
        filename: canary.artifact.filename,
        content_type: canary.artifact.contentType,
        url: `/api/canaries/${canary.id}/artifact`,
      },
    }),
    ...(canary.redirectUrl && { redirect_url: canary.redirectUrl }),
    how_to_use: KINDS[canary.kind].howToUse,
    created_at: canary.createdAt.toISOString(),
    age_days: Math.floor((now.getTime() - canary.createdAt.getTime()) / 86_400_000),
    retired_at: canary.retiredAt?.toISOString() ?? null,
    hit_count: canary.hitCount ?? 0,
    last_hit_at: canary.lastHitAt?.toISOString() ?? null,
  };
}

export interface CanaryRoutesDeps {
  canaries: CanariesRepository;
  decoys: DecoySettings;
  clock: Clock;
  /** Planting is a metered new action; firing and alerting never are. */
  meterPlant: RequestHandler;
}

const owned = (canaries: CanariesRepository, res: Response, canaryId: string) =>
  findOwned(res, canaries, canaryId, `canary ${canaryId}`);

const listQuery = z.object({ include_retired: z.enum(['true', 'false']).optional() });

const operation = operationsFor<CanaryRoutesDeps>('Canaries');

/** `/api/canaries` (session, or an API key with `canaries:read`): plant, list, get, retire. */
export const canaryOperations = [
  operation({
    operationId: 'plantCanary',
    method: 'post',
    path: '/api/canaries',
    summary: 'Plant a canary (metered)',
    auth: 'sessionOrApiKey',
    body: plantSchema,
    before: ({ meterPlant }) => [meterPlant],
    success: { status: 201, description: 'The canary, with its decoy value' },
    response: canaryView,
    errors: { 402: 'Plan limit reached', 429: 'Burst limit reached' },
    examples: { body: { kind: 'url', memo: 'wiki page' } },
    handler: async ({ body, res }, { canaries, decoys, clock }) => {
      const now = clock();
      const canary = await canaries.plant(
        {
          accountId: callerAccountId(res),
          kind: body.kind,
          memo: body.memo,
          platform: body.platform ?? null,
        },
        makeDecoy(body.kind, decoys, {
          redirectUrl: body.redirect_url,
          siteUrl: body.site_url,
          image: body.image === undefined ? undefined : Buffer.from(body.image, 'base64'),
        }),
        now,
      );
      return describeCanary(canary, now);
    },
  }),
  operation({
    operationId: 'listCanaries',
    method: 'get',
    path: '/api/canaries',
    summary: "The account's canaries",
    description: 'Newest first; `include_retired=true` adds retired ones.',
    auth: 'sessionOrApiKey',
    query: listQuery,
    success: { status: 200, description: '`{canaries}`' },
    response: canaryListView,
    handler: async ({ query, res }, { canaries, clock }) => {
      const list = await canaries.list(callerAccountId(res), query.include_retired === 'true');
      const now = clock();
      return { canaries: list.map((c) => describeCanary(c, now)) };
    },
  }),
  operation({
    operationId: 'getCanary',
    method: 'get',
    path: '/api/canaries/{canary_id}',
    summary: 'One canary',
    auth: 'sessionOrApiKey',
    success: { status: 200, description: 'The canary' },
    response: canaryView,
    handler: async ({ params, res }, { canaries, clock }) =>
      describeCanary(await owned(canaries, res, params.canary_id!), clock()),
  }),
  operation({
    operationId: 'downloadCanaryArtifact',
    method: 'get',
    path: '/api/canaries/{canary_id}/artifact',
    summary: "The canary's file to plant (document, image, dump, config…)",
    description:
      'The bytes of the file named by the canary’s `artifact`, with its content type and file name; 404 for kinds planted as text alone.',
    auth: 'sessionOrApiKey',
    success: {
      status: 200,
      description: 'The file, as an attachment',
      contentType: 'application/octet-stream',
    },
    handler: async ({ params, res }, { canaries }) => {
      const canary = await owned(canaries, res, params.canary_id!);
      const artifact = await canaries.artifact(canary.id, { accountId: canary.accountId });
      if (!artifact) throw new DomainError('not_found', `Canary ${canary.id} has no artifact`);
      res
        .status(200)
        .type(artifact.contentType)
        .attachment(artifact.filename)
        .set('Cache-Control', 'private, no-store')
        .send(artifact.body);
    },
  }),
  /** Retires: the canary stops firing at once; its record and its threat events stay. */
  operation({
    operationId: 'retireCanary',
    method: 'delete',
    path: '/api/canaries/{canary_id}',
    summary: 'Retire a canary',
    description: 'The canary stops firing at once; its record and its threat events stay.',
    auth: 'sessionOrApiKey',
    success: { status: 200, description: 'The retired canary' },
    response: canaryView,
    handler: async ({ params, res }, { canaries, clock }) => {
      const canary = await owned(canaries, res, params.canary_id!);
      const now = clock();
      const retired = await canaries.retire(canary.accountId, canary.id, now);
      if (!retired) throw new DomainError('not_found', `No canary ${canary.id}`);
      return describeCanary(retired, now);
    },
  }),
];
