import type { RequestHandler } from 'express';
import helmet from 'helmet';

/**
 * Helmet's headers on every answer (nosniff, no framing, no referrer, HSTS, …) with a Content
 * Security Policy that lets an API answer load nothing at all. Pages that need more (the console,
 * the reference page) set their own policy over this one.
 */
export function securityHeaders(): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'none'"],
      },
    },
    frameguard: { action: 'deny' },
  });
}
