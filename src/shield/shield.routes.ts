import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { requireApiKey } from '../http/api-key-auth';
import { ownAccountOnly } from '../http/caller';
import { validateBody } from '../http/validate';

const inspectSchema = z.object({
  user_id: z.string().min(1),
  user_message: z.string().max(32_768),
});

type InspectRequest = z.infer<typeof inspectSchema>;

/** Exported with `inspect` for the benchmark's unauthenticated baseline. */
export const inspectValidation = validateBody(inspectSchema);

/**
 * The shield product area. Until its inspection rules land, `POST /shield/inspect` validates the
 * request, applies the ownership rule and the plan's meter, and acknowledges it, so the key, scope
 * and metering layers are exercised end to end on a real product route.
 */
export function shieldRoutes(meterInspection: RequestHandler): Router {
  const router = Router();
  router.use(requireApiKey);
  router.post('/inspect', ownAccountOnly, inspectValidation, meterInspection, inspect);
  return router;
}

/** Exported for the benchmark, which serves it with and without authentication and metering. */
export const inspect: RequestHandler = (req, res) => {
  const { user_id, user_message } = req.body as InspectRequest;
  res.json({ user_id, message_length: user_message.length });
};
