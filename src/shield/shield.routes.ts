import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { requireApiKey } from '../http/api-key-auth';
import { ownAccountOnly } from '../http/caller';

const inspectSchema = z.object({
  user_id: z.string().min(1),
  user_message: z.string().max(32_768),
});

/**
 * The shield product area. Until its inspection rules land, `POST /shield/inspect` validates the
 * request, applies the ownership rule and acknowledges it, so the key and scope gate is exercised
 * end to end on a real product route.
 */
export function shieldRoutes(): Router {
  const router = Router();
  router.use(requireApiKey);
  router.post('/inspect', ownAccountOnly, inspect);
  return router;
}

/** Exported for the benchmark, which serves it with and without authentication. */
export const inspect: RequestHandler = (req, res) => {
  const { user_id, user_message } = inspectSchema.parse(req.body);
  res.json({ user_id, message_length: user_message.length });
};
