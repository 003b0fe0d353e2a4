import { Router } from 'express';
import { z } from 'zod';
import { PLAN_IDS } from '../plans';
import { AppError } from '../http/errors';
import { sessionOf } from '../http/session-auth';
import type { AuthService } from './auth.service';
import { newPassword } from './auth.routes';
import type { UsersRepository } from './users.repository';

export const meView = z.object({
  user_id: z.string(),
  email: z.string(),
  plan: z.enum(PLAN_IDS),
  created_at: z.iso.datetime(),
});

export const passwordChangeSchema = z.object({
  current_password: z.string().min(1).max(256),
  new_password: newPassword,
});

/** Mounted behind requireSession. */
export function usersRoutes(users: UsersRepository, auth: AuthService): Router {
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

  // The current password again, so a session left open on a shared computer cannot take the
  // account over; every other session of the account ends.
  router.post('/me/password', async (req, res) => {
    const body = passwordChangeSchema.parse(req.body);
    await auth.changePassword(sessionOf(res), body.current_password, body.new_password, req.ip);
    res.status(204).end();
  });

  return router;
}
