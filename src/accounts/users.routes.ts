import { Router } from 'express';
import { AppError } from '../http/errors';
import { sessionOf } from '../http/session-auth';
import type { UsersRepository } from './users.repository';

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
    });
  });

  return router;
}
