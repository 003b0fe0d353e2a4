import type { Response } from 'express';
import { z } from 'zod';
import type { User, UsersRepository } from '../accounts/users.repository';
import { callerAccountId } from '../auth/caller';
import { operationsFor } from '../http/operation';
import { cursorSchema, encodeCursor, limitSchema } from '../http/pagination';
import { usageRowView } from '../metering/meter';
import { PLAN_IDS } from '../plans';
import type { AdminService, Operator } from './admin.service';
import { NOT_AN_OPERATOR, requireOperator } from './operators';

export const accountView = z
  .object({
    user_id: z.string(),
    email: z.string(),
    plan: z.enum(PLAN_IDS),
    role: z.enum(['user', 'operator']),
    disabled_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'AdminAccount' });

function describe(user: User): z.output<typeof accountView> {
  return {
    user_id: user.id,
    email: user.email,
    plan: user.plan,
    role: user.role ?? 'user',
    disabled_at: user.disabledAt?.toISOString() ?? null,
    created_at: user.createdAt.toISOString(),
  };
}

function operatorOf(res: Response): Operator {
  const { apiKey, session } = res.locals;
  const via = apiKey
    ? { type: 'api_key' as const, id: apiKey.keyId }
    : { type: 'session' as const, id: session!.sessionId };
  return { accountId: callerAccountId(res), via };
}

export const accountListView = z
  .object({ accounts: z.array(accountView), next_cursor: z.string().nullable() })
  .meta({ id: 'AdminAccountPage' });

export interface AdminDeps {
  admin: AdminService;
  users: UsersRepository;
}
const operation = operationsFor<AdminDeps>('Admin');

/** Email order: the cursor is the last email of the page. */
const listQuery = z
  .object({
    limit: limitSchema,
    q: z.string().max(254).default(''),
    cursor: cursorSchema(z.string()).optional(),
  })
  .strict();

const accountPath = '/api/admin/accounts/{user_id}';
const onlyOperators = (deps: AdminDeps) => [requireOperator(deps.users)];
const refusals = { 403: NOT_AN_OPERATOR, 404: 'No such account' };

/** `POST /api/admin/accounts/{user_id}/<disable|enable>`: the account as it now is. */
function switchOperation(to: 'disable' | 'enable', summary: string, description: string) {
  return operation({
    operationId: `admin${to[0]!.toUpperCase()}${to.slice(1)}Account`,
    method: 'post',
    path: `${accountPath}/${to}`,
    summary,
    description,
    auth: 'sessionOrApiKey',
    before: onlyOperators,
    success: { status: 200, description: 'The account' },
    response: accountView,
    errors: refusals,
    handler: async ({ params, res }, { admin }) =>
      describe(await admin[to](operatorOf(res), params.user_id!)),
  });
}

/**
 * `/api/admin` (operators only; `admin:*` for keys): accounts, their plan, usage, sessions, and
 * disabling. The operator check runs after input validation, so a malformed request from anyone is
 * a 422; every well-formed one from a non-operator is a 403 before any account is read.
 */
export const adminOperations = [
  operation({
    operationId: 'adminListAccounts',
    method: 'get',
    path: '/api/admin/accounts',
    summary: 'Accounts, by email',
    description:
      'In email order; `q` keeps the accounts whose email starts with it (an account id is looked up with the next operation).',
    auth: 'sessionOrApiKey',
    query: listQuery,
    before: onlyOperators,
    success: { status: 200, description: '`{accounts, next_cursor}`' },
    response: accountListView,
    errors: { 403: NOT_AN_OPERATOR },
    handler: async ({ query }, { admin }) => {
      const users = await admin.search(query.q, query.cursor, query.limit);
      const last = users.at(-1);
      return {
        accounts: users.map(describe),
        next_cursor: last && users.length === query.limit ? encodeCursor(last.email) : null,
      };
    },
  }),
  operation({
    operationId: 'adminGetAccount',
    method: 'get',
    path: accountPath,
    summary: 'One account and its usage',
    auth: 'sessionOrApiKey',
    before: onlyOperators,
    success: { status: 200, description: '`{account, usage}`' },
    response: z.object({ account: accountView, usage: z.array(usageRowView) }),
    errors: refusals,
    handler: async ({ params }, { admin }) => {
      const { user, usage } = await admin.account(params.user_id!);
      return { account: describe(user), usage };
    },
  }),
  operation({
    operationId: 'adminUpdateAccount',
    method: 'patch',
    path: accountPath,
    summary: "Change an account's plan",
    auth: 'sessionOrApiKey',
    body: z.object({ plan: z.enum(PLAN_IDS) }).strict(),
    before: onlyOperators,
    success: { status: 200, description: 'The account' },
    response: accountView,
    errors: refusals,
    examples: { body: { plan: 'pro' } },
    handler: async ({ body, params, res }, { admin }) =>
      describe(await admin.setPlan(operatorOf(res), params.user_id!, body.plan)),
  }),
  switchOperation(
    'disable',
    'Disable an account',
    'No sign-in, every session ended, every API key refused (suspended, not revoked) until it is enabled again. Its canaries still fire and are recorded.',
  ),
  switchOperation(
    'enable',
    'Enable a disabled account again',
    'Sign-in works again and its suspended API keys with it.',
  ),
  operation({
    operationId: 'adminRevokeSessions',
    method: 'post',
    path: `${accountPath}/revoke-sessions`,
    summary: 'End every session of an account',
    auth: 'sessionOrApiKey',
    before: onlyOperators,
    success: { status: 200, description: '`{sessions_ended}`' },
    response: z.object({ sessions_ended: z.number().int() }),
    errors: refusals,
    handler: async ({ params, res }, { admin }) => ({
      sessions_ended: await admin.revokeSessions(operatorOf(res), params.user_id!),
    }),
  }),
];
