import { Router } from 'express';
import { z } from 'zod';
import type { Clock } from '../clock';
import { callerAccountId } from '../http/caller';
import { AppError } from '../http/errors';
import type { User, UsersRepository } from './users.repository';

/** A numeric chat id (negative for groups) or a public channel's @name, as the Bot API accepts. */
const telegramChatId = z
  .string()
  .regex(/^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31})$/, 'a numeric chat id or an @channel name');

export const updateSchema = z.object({ telegram_chat_id: telegramChatId.nullable() }).strict();

export const settingsView = z.object({ telegram_chat_id: z.string().nullable() });

function describe(user: User): z.output<typeof settingsView> {
  return { telegram_chat_id: user.telegramChatId ?? null };
}

/** `/api/settings` (session, or an API key with settings scopes): the account's own settings. */
export function settingsRoutes(users: UsersRepository, clock: Clock): Router {
  const router = Router();
  const gone = () => new AppError(401, 'The account of this caller no longer exists');

  router.get('/', async (_req, res) => {
    const user = await users.findById(callerAccountId(res));
    if (!user) throw gone();
    res.json(describe(user));
  });

  router.patch('/', async (req, res) => {
    const body = updateSchema.parse(req.body);
    const settings = { telegramChatId: body.telegram_chat_id };
    const user = await users.updateSettings(callerAccountId(res), settings, clock());
    if (!user) throw gone();
    res.json(describe(user));
  });

  return router;
}
