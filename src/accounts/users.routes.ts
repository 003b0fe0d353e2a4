import { Router } from 'express';
import { z } from 'zod';
import { PLAN_IDS } from '../plans';
import { AppError } from '../http/errors';
import { sessionOf } from '../http/session-auth';
import type { UsersRepository } from './users.repository';

export const meView = z.object({
  user_id: z.string(),
  email: z.string(),
  plan: z.enum(PLAN_IDS),
  created_at: z.iso.datetime(),
});

/** Mounted behind requireSession. */
export function usersRoutes(users: UsersRepository): Router {
  const router = Router();

  router.get('/me', async (_req, res) => {
    const user = await users.findById(sessionOf(res).userId);
    if (!user) throw new AppError(401, 'The account of this session no longer exists');
    res.json({
      user_id: user.id,
      email: user.email,
      plan: user.plan,
      created_at: user.createdAt.toISOString(),
    } satisfies z.output<typeof meView>);
  });

  return router;
}
