import type { RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { Clock } from '../clock';
import { DomainError } from '../errors';
import { callerAccountId, findOwned } from '../auth/caller';
import { operationsFor } from '../http/operation';
import type { CanariesRepository, Canary } from './canaries.repository';
import { CANARY_KINDS, makeDecoy, type CanaryKind, type DecoySettings } from './decoys';

export const plantSchema = z
  .object({
    kind: z.enum(CANARY_KINDS),
    memo: z.string().trim().max(500).default(''),
    platform: z.string().trim().min(1).max(100).optional(),
  })
  .strict();

const HOW_TO_USE: Record<CanaryKind, string> = {
  api_key:
    'Store it where a real key would live (an .env file, CI secrets, a config repository). It fires when sent to this service as X-API-Key, a bearer token or a password.',
  aws_access_key:
    'Plant the two files as ~/.aws/credentials and ~/.aws/config (or the pair alone where cloud credentials live). Any AWS CLI or SDK call made with that profile is sent, signed with this key id, to this service’s decoy AWS endpoint (the config’s endpoint_url) and fires; so does either half presented to this service as a key, a password or in an AWS Signature V4 header. It does not fire when the key is used against real AWS without that endpoint_url (for example copied into another machine’s profile): AWS never tells us.',
  database_url:
    'Leave it in a config file or secret store next to real connection strings. Connecting with it (psql, any Postgres driver) reaches this service’s decoy Postgres listener, which fires and answers an ordinary authentication failure; its password presented to this service fires too.',
  url: 'Put the link where only an intruder would follow it (an internal wiki, a bookmarks file, a document). It fires when fetched; the fetcher sees an ordinary page.',
  rag_marker:
    'Embed it in a document (a footer or a reference line). It fires when it shows up again: in a shield inspection, a leak report, or presented as a credential.',
  email:
    'Plant the address where harvesters look. Mail to it fires; the delivering server is recorded as the mail server (the sender’s provider, not the attacker).',
  dns: 'Put the hostname where a lookup means someone is using it (a config file, an internal URL, a hosts list; another canary may embed it). Any DNS lookup of it fires, even where outbound HTTP is blocked; the resolver that asked is recorded, not the attacker, whose address DNS does not reveal.',
  kubeconfig:
    'Save it as ~/.kube/config (or beside real kubeconfigs). Any kubectl or Kubernetes client request made with it reaches this service’s decoy Kubernetes API, fires and gets an ordinary 401. Its token presented to this service as a bearer token fires too.',
};

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
    how_to_use: HOW_TO_USE[canary.kind],
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
        makeDecoy(body.kind, decoys),
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
