import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import express, { Router } from 'express';
import { DomainError } from '../errors';

/** The console's own code and the API on one origin: nothing else may load or frame it. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "img-src 'self' data:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/**
 * The web console: the static build of console/ (tools/build-console.mjs) at /console/, and `/`
 * sends a browser there. Revalidated on every load (ETag), so a new build shows at once.
 */
export function consoleRoutes(dir: string): Router {
  const root = resolve(dir);
  const router = Router();
  router.get('/', (_req, res) => res.redirect(302, '/console/'));
  router.use('/console', (_req, res, next) => {
    if (!existsSync(resolve(root, 'index.html'))) {
      throw new DomainError(
        'unavailable',
        `The console is not built in ${root}: run npm run build:console`,
      );
    }
    res.set({
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-cache',
    });
    next();
  });
  router.use('/console', express.static(root, { index: 'index.html', redirect: true }));
  return router;
}
