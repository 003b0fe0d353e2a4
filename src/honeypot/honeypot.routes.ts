import type { RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { CanariesRepository, Canary } from '../canaries/canaries.repository';
import { canaryView, describeCanary } from '../canaries/canaries.routes';
import type { DecoySettings } from '../canaries/decoys';
import { makeDecoy, type CanaryKind } from '../canaries/kinds';
import type { EvidenceBoundRemoval } from '../canaries/evidence-bound-removal';
import { HIT_VIAS, type ThreatsRepository } from '../canaries/threats.repository';
import type { Clock } from '../clock';
import { evidenceRefView } from '../evidence/evidence.service';
import { callerAccountId, callerOf, findOwned } from '../auth/caller';
import { operationsFor } from '../http/operation';
import { TRAP_KINDS, type Trap, type TrapKind, type TrapsRepository } from './traps.repository';

/** What each trap is made of: an endpoint is one URL tripwire; a credential set, three decoys. */
const DECOYS: Record<TrapKind, CanaryKind[]> = {
  endpoint: ['url'],
  credentials: ['api_key', 'aws_access_key', 'database_url'],
};

export const createSchema = z
  .object({
    name: z.string().trim().min(1).max(100),
    kind: z.enum(TRAP_KINDS),
    platform: z.string().trim().min(1).max(100).optional(),
  })
  .strict();

export const deleteQuery = z.object({ force: z.enum(['true', 'false']).optional() }).strict();

export const trapView = z
  .object({
    trap_id: z.string(),
    name: z.string(),
    kind: z.enum(TRAP_KINDS),
    decoys: z.array(canaryView),
    hit_count: z.number().int(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'Trap' });
export const trapListView = z.object({ traps: z.array(trapView) }).meta({ id: 'TrapList' });
export const trapHitsView = z
  .object({
    hits: z.array(
      z.object({
        hit_id: z.string(),
        canary_id: z.string(),
        threat_event_id: z.string(),
        at: z.iso.datetime(),
        via: z.enum(HIT_VIAS),
        ip: z.string(),
        evidence: evidenceRefView,
      }),
    ),
  })
  .meta({ id: 'TrapHits' });
export const trapDeletedView = z
  .object({
    trap_id: z.string(),
    deleted: z.literal(true),
    removed_hits: z.number().int(),
  })
  .meta({ id: 'TrapDeleted' });

export interface HoneypotDeps {
  traps: TrapsRepository;
  canaries: CanariesRepository;
  threats: ThreatsRepository;
  removal: EvidenceBoundRemoval;
  decoys: DecoySettings;
  clock: Clock;
  meterPlant: RequestHandler;
}

const owned = (traps: TrapsRepository, res: Response, trapId: string) =>
  findOwned(res, traps, trapId, `trap ${trapId}`);

async function describe(
  { canaries, threats, clock }: HoneypotDeps,
  trap: Trap,
): Promise<z.output<typeof trapView>> {
  const now = clock();
  const members = await Promise.all(trap.canaryIds.map((id) => canaries.find(trap.accountId, id)));
  const hitCount = await threats.countHits(trap.accountId, trap.canaryIds);
  return {
    trap_id: trap.id,
    name: trap.name,
    kind: trap.kind,
    decoys: members.filter((c): c is Canary => c !== null).map((c) => describeCanary(c, now)),
    hit_count: hitCount,
    created_at: trap.createdAt.toISOString(),
  };
}

const operation = operationsFor<HoneypotDeps>('Honeypot');

/** `/honeypot` (session, or API key with honeypot scopes): traps whose hits fire as canaries. */
export const honeypotOperations = [
  operation({
    operationId: 'createTrap',
    method: 'post',
    path: '/honeypot/traps',
    summary: 'Create a trap (metered)',
    auth: 'sessionOrApiKey',
    body: createSchema,
    before: ({ meterPlant }) => [meterPlant],
    success: { status: 201, description: 'The trap' },
    response: trapView,
    errors: { 402: 'Plan limit reached' },
    examples: { body: { name: 'staging admin', kind: 'credentials' } },
    handler: async ({ body, res }, deps) => {
      const { traps, canaries, decoys, clock } = deps;
      const accountId = callerAccountId(res);
      const now = clock();
      const planted = [];
      for (const kind of DECOYS[body.kind]) {
        const memo = `honeypot trap: ${body.name}`;
        const fields = { accountId, kind, memo, platform: body.platform ?? null };
        planted.push(await canaries.plant(fields, makeDecoy(kind, decoys), now));
      }
      const trap = await traps.create(
        { accountId, name: body.name, kind: body.kind, canaryIds: planted.map((c) => c.id) },
        now,
      );
      return describe(deps, trap);
    },
  }),
  operation({
    operationId: 'listTraps',
    method: 'get',
    path: '/honeypot/traps',
    summary: 'Traps',
    auth: 'sessionOrApiKey',
    success: { status: 200, description: '`{traps}`' },
    response: trapListView,
    handler: async ({ res }, deps) => {
      const list = await deps.traps.list(callerAccountId(res));
      return { traps: await Promise.all(list.map((trap) => describe(deps, trap))) };
    },
  }),
  operation({
    operationId: 'getTrap',
    method: 'get',
    path: '/honeypot/traps/{trap_id}',
    summary: 'One trap',
    auth: 'sessionOrApiKey',
    success: { status: 200, description: 'The trap' },
    response: trapView,
    handler: async ({ params, res }, deps) =>
      describe(deps, await owned(deps.traps, res, params.trap_id!)),
  }),
  /** The trap's recorded hits, each sealed in an evidence record. */
  operation({
    operationId: 'listTrapHits',
    method: 'get',
    path: '/honeypot/traps/{trap_id}/hits',
    summary: "A trap's hits",
    auth: 'sessionOrApiKey',
    success: { status: 200, description: '`{hits}`' },
    response: trapHitsView,
    handler: async ({ params, res }, { traps, threats }) => {
      const trap = await owned(traps, res, params.trap_id!);
      const hits = await threats.hitsOf(trap.accountId, trap.canaryIds);
      return {
        hits: hits.map((h) => ({
          hit_id: h.id,
          canary_id: h.canaryId,
          threat_event_id: h.threatEventId,
          at: h.at.toISOString(),
          via: h.source.via,
          ip: h.source.ip,
          evidence: { log_id: h.evidence.logId, content_hash: h.evidence.contentHash },
        })),
      };
    },
  }),
  operation({
    operationId: 'deleteTrap',
    method: 'delete',
    path: '/honeypot/traps/{trap_id}',
    summary: 'Delete a trap (force removes its hits: session only)',
    description:
      'No hits: deleted (its decoys retired). Hits: 409 unless `force=true`, which removes the hits too and needs a console session; `force=true` with an API key is 403 whatever its scopes.',
    auth: 'sessionOrApiKey',
    query: deleteQuery,
    success: { status: 200, description: '`{trap_id, deleted, removed_hits}`' },
    response: trapDeletedView,
    errors: { 409: 'Holds hits: force=true needed' },
    handler: async ({ params, query, res }, { traps, removal }) => {
      const trap = await owned(traps, res, params.trap_id!);
      const { removedHits } = await removal.remove(callerOf(res), {
        accountId: trap.accountId,
        canaryIds: trap.canaryIds,
        label: `Trap ${trap.id}`,
        force: query.force === 'true',
      });
      await traps.remove(trap.accountId, trap.id);
      return { trap_id: trap.id, deleted: true as const, removed_hits: removedHits };
    },
  }),
];
