import { z } from 'zod';
import { PLAN_IDS } from '../plans';
import { DomainError } from '../errors';
import { operationsFor } from '../http/operation';
import { sessionOf } from '../auth/session-auth';
import type { AuthService } from './auth.service';
import { newPassword } from './auth.routes';
import type { UsersRepository } from './users.repository';

export const meView = z
  .object({
    user_id: z.string(),
    email: z.string(),
    plan: z.enum(PLAN_IDS),
    /** `operator` may use the admin API (set with `admin.cli.js set-role`). */
    role: z.enum(['user', 'operator']),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'Me' });

export const passwordChangeSchema = z.object({
  current_password: z.string().min(1).max(256),
  new_password: newPassword,
});

export interface UsersDeps {
  users: UsersRepository;
  auth: AuthService;
}
const operation = operationsFor<UsersDeps>('Accounts');

export const usersOperations = [
  operation({
    operationId: 'getMe',
    method: 'get',
    path: '/api/users/me',
    summary: 'The signed-in account',
    description: 'The account id is the `user_id` used everywhere.',
    auth: 'session',
    success: { status: 200, description: '`{user_id, email, plan, role, created_at}`' },
    response: meView,
    handler: async ({ res }, { users }) => {
      const user = await users.findById(sessionOf(res).userId);
      if (!user) {
        throw new DomainError('unauthenticated', 'The account of this session no longer exists');
      }
      return {
        user_id: user.id,
        email: user.email,
        plan: user.plan,
        role: user.role ?? 'user',
        created_at: user.createdAt.toISOString(),
      };
    },
  }),
  // The current password again, so a session left open on a shared computer cannot take the
  // account over; every other session of the account ends.
  operation({
    operationId: 'changePassword',
    method: 'post',
    path: '/api/users/me/password',
    summary: "Change the signed-in account's password; its other sessions end",
    description:
      "The account's other sessions end, this one stays; a wrong current password counts towards the sign-in throttle.",
    auth: 'session',
    body: passwordChangeSchema,
    success: { status: 204, description: 'Done, no body' },
    errors: {
      403: '`current_password` does not match',
      429: 'Too many wrong current passwords (`login_throttled`, `Retry-After`)',
      503: 'Too many passwords are being hashed right now (`login_busy`, `Retry-After`)',
    },
    handler: async ({ body, req, res }, { auth }) => {
      await auth.changePassword(sessionOf(res), body.current_password, body.new_password, req.ip);
    },
  }),
];
