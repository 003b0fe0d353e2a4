import { Router, type Request, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { requireApiKey } from '../http/api-key-auth';
import { callerAccountId, ownAccountOnly } from '../http/caller';
import { parseQuery, validateBody } from '../http/validate';
import { inspectionResultView, type ShieldInspector } from './shield.service';

export const inspectSchema = z.object({
  user_id: z.string().min(1),
  user_message: z.string().max(32_768),
});

export const historyQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(200).default(50),
    before: z.coerce.number().int().min(1).optional(),
  })
  .strict();

type InspectRequest = z.infer<typeof inspectSchema>;

export const inspectionView = inspectionResultView.extend({ user_id: z.string() });

/** Exported with `inspectHandler` for the benchmark's unauthenticated baseline. */
export const inspectValidation = validateBody(inspectSchema);

/**
 * The inspection itself, for the route and the benchmark's baseline: `accountOf` says whose
 * tripwires and evidence log the request uses.
 */
export function inspectHandler(
  inspector: ShieldInspector,
  accountOf: (req: Request, res: Response) => string,
): RequestHandler {
  return async (req, res) => {
    const { user_id, user_message } = req.body as InspectRequest;
    const result = await inspector.inspect(req, accountOf(req, res), user_id, user_message);
    res.json({ user_id, ...result } satisfies z.output<typeof inspectionView>);
  };
}

/**
 * The shield product area (API key only): `POST /shield/inspect` (`shield:write`, own account,
 * metered) and `GET /shield/inspections` (`shield:read`), the sealed history.
 */
export function shieldRoutes(meterInspection: RequestHandler, inspector: ShieldInspector): Router {
  const router = Router();
  router.use(requireApiKey);
  router.post(
    '/inspect',
    ownAccountOnly,
    inspectValidation,
    meterInspection,
    inspectHandler(inspector, (_req, res) => callerAccountId(res)),
  );
  router.get('/inspections', async (req, res) => {
    const { limit, before } = parseQuery(historyQuery, req.query);
    res.json(await inspector.history(callerAccountId(res), limit, before));
  });
  return router;
}
