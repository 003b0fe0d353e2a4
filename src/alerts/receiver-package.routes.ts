import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Router } from 'express';
import { DomainError } from '../errors';

/** The receivers' package, packed by the build (tools/build-webhook-verify.mjs). */
export const RECEIVER_PACKAGE = 'dist/downloads/webhook-verify.tgz';

/**
 * `GET /downloads/webhook-verify.tgz`: the packed `@tripwire/webhook-verify`, public like the
 * package itself, so a receiver runs `npm install https://<service>/downloads/webhook-verify.tgz`
 * (or installs the downloaded file) without this repository or any registry.
 */
export function receiverPackageRoutes(file: string = RECEIVER_PACKAGE): Router {
  const path = resolve(file);
  const router = Router();
  router.get('/downloads/webhook-verify.tgz', (_req, res, next) => {
    if (!existsSync(path)) {
      throw new DomainError(
        'unavailable',
        `The receivers' package is not built in ${path}: run npm run build`,
      );
    }
    res.set('Cache-Control', 'no-cache');
    res.attachment('webhook-verify.tgz').type('application/gzip').sendFile(path, next);
  });
  return router;
}
