import { z } from 'zod';
import { operationsFor } from '../http/operation';
import { sessionOf } from '../auth/session-auth';
import type { ApiKey } from './api-keys.repository';
import type { ApiKeysService } from './api-keys.service';
import { MAX_SCOPES } from './scopes';

export const createSchema = z.object({
  name: z.string().trim().min(1).max(100).optional(),
  scopes: z.array(z.string().max(100)).max(MAX_SCOPES, `at most ${MAX_SCOPES} entries`).optional(),
});

export const revokeSchema = z.object({ key: z.string().min(1).max(200) });

/** The key as lists show it: never the value or its hash. */
export const keyView = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string(),
    scopes: z.array(z.string()),
    created_at: z.iso.datetime(),
    last_used_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'ApiKey' });
/** A new key: the only answer that carries its value. */
export const newKeyView = keyView.extend({ key: z.string() }).meta({ id: 'NewApiKey' });
export const keyListView = z.object({ keys: z.array(keyView) }).meta({ id: 'ApiKeyList' });
export const revokedKeyView = z
  .object({
    revoked: keyView,
    revoked_at: z.iso.datetime().optional(),
  })
  .meta({ id: 'RevokedApiKey' });

function describeKey(key: ApiKey): z.output<typeof keyView> {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scopes: key.scopes,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
  };
}

const describeRevoked = (key: ApiKey): z.output<typeof revokedKeyView> => ({
  revoked: describeKey(key),
  revoked_at: key.revokedAt?.toISOString(),
});

const operation = operationsFor<ApiKeysService>('API keys');

/** Key management: console sessions only (API keys cannot manage keys). */
export const apiKeysOperations = [
  operation({
    operationId: 'createApiKey',
    method: 'post',
    path: '/api/auth/generate-key',
    summary: 'Create an API key (shown once)',
    description:
      '`key` is shown this once; at most 20 scopes, and five active keys per account. Scopes of the `admin` namespace only on operator accounts (403 otherwise).',
    auth: 'session',
    body: createSchema,
    bodyOptional: true,
    success: { status: 201, description: 'The key' },
    response: newKeyView,
    errors: {
      400: 'Five active keys already',
      403: 'Admin scopes on an account that is not an operator',
    },
    examples: { body: { name: 'ci', scopes: ['canaries:read', 'shield:*'] } },
    handler: async ({ body, res }, keys) => {
      const { key, value } = await keys.create(sessionOf(res), body);
      res.set('Cache-Control', 'no-store');
      return { key: value, ...describeKey(key) };
    },
  }),
  operation({
    operationId: 'listApiKeys',
    method: 'get',
    path: '/api/auth/keys',
    summary: 'Active API keys',
    description: 'Never a key value or its hash.',
    auth: 'session',
    success: { status: 200, description: '`{keys}`' },
    response: keyListView,
    handler: async ({ res }, keys) => ({
      keys: (await keys.list(sessionOf(res).userId)).map(describeKey),
    }),
  }),
  operation({
    operationId: 'revokeApiKey',
    method: 'delete',
    path: '/api/auth/keys/{key_id}',
    summary: 'Revoke an API key',
    auth: 'session',
    success: { status: 200, description: '`{revoked, revoked_at}`' },
    response: revokedKeyView,
    handler: async ({ params, res }, keys) =>
      describeRevoked(await keys.revokeById(sessionOf(res), params.key_id!)),
  }),
  operation({
    operationId: 'revokeApiKeyByValue',
    method: 'post',
    path: '/api/auth/revoke-key',
    summary: 'Revoke an API key by its value',
    description: 'The value must match, so revoking also proves possession.',
    auth: 'session',
    body: revokeSchema,
    success: { status: 200, description: '`{revoked, revoked_at}`' },
    response: revokedKeyView,
    errors: {
      403: "Another account's key",
      404: 'No key matches the value, or it is already revoked',
    },
    handler: async ({ body, res }, keys) =>
      describeRevoked(await keys.revokeByValue(sessionOf(res), body.key)),
  }),
];
