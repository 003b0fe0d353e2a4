import { z } from 'zod';
import type { Clock } from '../clock';
import { callerAccountId } from '../auth/caller';
import { DomainError } from '../errors';
import { operationsFor } from '../http/operation';
import type { User, UsersRepository } from './users.repository';

/** A numeric chat id (negative for groups) or a public channel's @name, as the Bot API accepts. */
const telegramChatId = z
  .string()
  .regex(/^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31})$/, 'a numeric chat id or an @channel name');

export const updateSchema = z
  .object({
    telegram_chat_id: telegramChatId.nullable().optional(),
    community_sharing: z.boolean().optional(),
  })
  .strict();

export const settingsView = z
  .object({ telegram_chat_id: z.string().nullable(), community_sharing: z.boolean() })
  .meta({ id: 'Settings' });

function describe(user: User): z.output<typeof settingsView> {
  return {
    telegram_chat_id: user.telegramChatId ?? null,
    community_sharing: user.communitySharing ?? false,
  };
}

const gone = () =>
  new DomainError('unauthenticated', 'The account of this caller no longer exists');

export interface SettingsDeps {
  users: UsersRepository;
  clock: Clock;
}
const operation = operationsFor<SettingsDeps>('Accounts');

/** `/api/settings` (session, or an API key with settings scopes): the account's own settings. */
export const settingsOperations = [
  operation({
    operationId: 'getSettings',
    method: 'get',
    path: '/api/settings',
    summary: "The account's settings",
    description:
      "`telegram_chat_id`: where the built-in chat channel sends this account's alerts (`null` turns it off). `community_sharing`: opted in to community indicators (off by default).",
    auth: 'sessionOrApiKey',
    success: { status: 200, description: '`{telegram_chat_id, community_sharing}`' },
    response: settingsView,
    handler: async ({ res }, { users }) => {
      const user = await users.findById(callerAccountId(res));
      if (!user) throw gone();
      return describe(user);
    },
  }),
  operation({
    operationId: 'updateSettings',
    method: 'patch',
    path: '/api/settings',
    summary: "Change the account's settings",
    description: 'A setting left out stays as it is.',
    auth: 'sessionOrApiKey',
    body: updateSchema,
    success: { status: 200, description: '`{telegram_chat_id, community_sharing}`' },
    response: settingsView,
    examples: { body: { telegram_chat_id: '@my_alerts' } },
    handler: async ({ body, res }, { users, clock }) => {
      const settings = {
        telegramChatId: body.telegram_chat_id,
        communitySharing: body.community_sharing,
      };
      const user = await users.updateSettings(callerAccountId(res), settings, clock());
      if (!user) throw gone();
      return describe(user);
    },
  }),
];
