import { Router } from 'express';
import { z } from 'zod';
import { sessionOf } from '../http/session-auth';
import type { ApiKey } from './api-keys.repository';
import type { ApiKeysService } from './api-keys.service';
import { MAX_SCOPES } from './scopes';

export const createSchema = z.object({
  name: z.string().trim().min(1).max(100).optional(),
  scopes: z.array(z.string().max(100)).max(MAX_SCOPES, `at most ${MAX_SCOPES} entries`).optional(),
});

export const revokeSchema = z.object({ key: z.string().min(1).max(200) });

/** The key as lists show it: never the value or its hash. */
export const keyView = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(z.string()),
  created_at: z.iso.datetime(),
  last_used_at: z.iso.datetime().nullable(),
});
/** A new key: the only answer that carries its value. */
export const newKeyView = keyView.extend({ key: z.string() });
export const keyListView = z.object({ keys: z.array(keyView) });
export const revokedKeyView = z.object({
  revoked: keyView,
  revoked_at: z.iso.datetime().optional(),
});

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

/** Key management, mounted under /api/auth behind requireSession (API keys cannot manage keys). */
export function apiKeysRoutes(keys: ApiKeysService): Router {
  const router = Router();

  router.post('/generate-key', async (req, res) => {
    const request = createSchema.parse(req.body ?? {});
    const { key, value } = await keys.create(sessionOf(res), request);
    res
      .status(201)
      .set('Cache-Control', 'no-store')
      .json({ key: value, ...describeKey(key) } satisfies z.output<typeof newKeyView>);
  });

  router.get('/keys', async (_req, res) => {
    const active = await keys.list(sessionOf(res).userId);
    res.json({ keys: active.map(describeKey) } satisfies z.output<typeof keyListView>);
  });

  router.delete('/keys/:key_id', async (req, res) => {
    const revoked = await keys.revokeById(sessionOf(res), req.params.key_id);
    res.json(describeRevoked(revoked));
  });

  router.post('/revoke-key', async (req, res) => {
    const { key } = revokeSchema.parse(req.body);
    const revoked = await keys.revokeByValue(sessionOf(res), key);
    res.json(describeRevoked(revoked));
  });

  return router;
}
