import { Router, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import type { CanariesRepository, Canary } from '../canaries/canaries.repository';
import { canaryView, describeCanary } from '../canaries/canaries.routes';
import { makeDecoy, type CanaryKind, type DecoySettings } from '../canaries/decoys';
import type { EvidenceBoundRemoval } from '../canaries/evidence-bound-removal';
import { HIT_VIAS, type ThreatsRepository } from '../canaries/threats.repository';
import type { Clock } from '../clock';
import { evidenceRefView } from '../evidence/evidence.service';
import { callerAccountId, ownedByCaller } from '../http/caller';
import { parseQuery, validateBody } from '../http/validate';
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

export const trapView = z.object({
  trap_id: z.string(),
  name: z.string(),
  kind: z.enum(TRAP_KINDS),
  decoys: z.array(canaryView),
  hit_count: z.number().int(),
  created_at: z.iso.datetime(),
});
export const trapListView = z.object({ traps: z.array(trapView) });
export const trapHitsView = z.object({
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
});
export const trapDeletedView = z.object({
  trap_id: z.string(),
  deleted: z.literal(true),
  removed_hits: z.number().int(),
});

interface HoneypotDeps {
  traps: TrapsRepository;
  canaries: CanariesRepository;
  threats: ThreatsRepository;
  removal: EvidenceBoundRemoval;
  decoys: DecoySettings;
  clock: Clock;
  meterPlant: RequestHandler;
}

/** `/honeypot` (session, or API key with honeypot scopes): traps whose hits fire as canaries. */
export function honeypotRoutes(deps: HoneypotDeps): Router {
  const { traps, canaries, threats, removal, decoys, clock, meterPlant } = deps;
  const router = Router();

  const owned = async (res: Response, trapId: string) =>
    ownedByCaller(res, await traps.findById(trapId), `trap ${trapId}`);

  const describe = async (trap: Trap): Promise<z.output<typeof trapView>> => {
    const now = clock();
    const members = await Promise.all(trap.canaryIds.map((id) => canaries.findById(id)));
    const hitCount = await threats.countHits(trap.accountId, trap.canaryIds);
    return {
      trap_id: trap.id,
      name: trap.name,
      kind: trap.kind,
      decoys: members.filter((c): c is Canary => c !== null).map((c) => describeCanary(c, now)),
      hit_count: hitCount,
      created_at: trap.createdAt.toISOString(),
    };
  };

  router.post('/traps', validateBody(createSchema), meterPlant, async (req, res) => {
    const body = req.body as z.infer<typeof createSchema>;
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
    res.status(201).json(await describe(trap));
  });

  router.get('/traps', async (_req, res) => {
    const list = await traps.list(callerAccountId(res));
    res.json({ traps: await Promise.all(list.map(describe)) } satisfies z.output<
      typeof trapListView
    >);
  });

  router.get('/traps/:trap_id', async (req, res) => {
    res.json(await describe(await owned(res, req.params.trap_id)));
  });

  /** The trap's recorded hits: each a sealed evidence record. */
  router.get('/traps/:trap_id/hits', async (req, res) => {
    const trap = await owned(res, req.params.trap_id);
    const hits = await threats.hitsOf(trap.accountId, trap.canaryIds);
    res.json({
      hits: hits.map((h) => ({
        hit_id: h.id,
        canary_id: h.canaryId,
        threat_event_id: h.threatEventId,
        at: h.at.toISOString(),
        via: h.source.via,
        ip: h.source.ip,
        evidence: { log_id: h.evidence.logId, content_hash: h.evidence.contentHash },
      })),
    } satisfies z.output<typeof trapHitsView>);
  });

  router.delete('/traps/:trap_id', async (req, res) => {
    const { force } = parseQuery(deleteQuery, req.query);
    const trap = await owned(res, req.params.trap_id);
    const { removedEvidence } = await removal.remove(res, {
      accountId: trap.accountId,
      canaryIds: trap.canaryIds,
      label: `Trap ${trap.id}`,
      force: force === 'true',
    });
    await traps.remove(trap.id);
    res.json({
      trap_id: trap.id,
      deleted: true,
      removed_hits: removedEvidence,
    } satisfies z.output<typeof trapDeletedView>);
  });

  return router;
}
