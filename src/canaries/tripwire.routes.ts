import { Router, type RequestHandler } from 'express';
import { authorization } from '../http/authorization';
import type { RefusedCredential } from '../http/api-key-auth';
import { urlToken } from './decoys';
import type { Tripwires } from './tripwires';

/** What every `/r/<token>` answers, tripwire or not: an ordinary page that gives nothing away. */
const ORDINARY_PAGE =
  '<!doctype html><html><head><meta charset="utf-8"><title>Document</title></head><body></body></html>';

/** `GET /r/<token>`: the URL tripwires. Unknown tokens get the same page in the same time. */
export function urlTripwireRoutes(tripwires: Tripwires): Router {
  const router = Router();
  router.get('/:token', async (req, res) => {
    const canaryId = await tripwires.canaryFor([urlToken(req.params.token)]);
    if (canaryId) tripwires.reportFrom(req, canaryId, 'url');
    res.set('Cache-Control', 'no-store').type('html').send(ORDINARY_PAGE);
  });
  return router;
}

/**
 * Authorization schemes this service never accepts (Basic, AWS Signature V4) can still carry a
 * planted credential: check them, then pass on, so the route refuses exactly as it would anyway.
 */
export function foreignCredentialTripwire(refused: RefusedCredential): RequestHandler {
  return async (req, _res, next) => {
    const header = authorization(req.get('authorization'));
    if (header?.scheme === 'basic') {
      const decoded = Buffer.from(header.credentials, 'base64').toString();
      const [user, ...password] = decoded.split(':');
      await refused(req, 'basic_auth', [user, password.join(':')]);
    } else if (header?.scheme === 'aws4-hmac-sha256') {
      const id = /Credential=([A-Z0-9]{16,128})\//.exec(header.credentials)?.[1];
      await refused(req, 'aws_signature', [id]);
    }
    next();
  };
}
