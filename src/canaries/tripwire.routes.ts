import express, { Router, type Express, type Request, type RequestHandler } from 'express';
import type { RefusedCredential } from '../http/api-key-auth';
import { authorization } from '../http/authorization';
import { requestIdOf } from '../http/request-id';
import type { Logger } from '../logger';
import { urlToken } from './decoys';
import { answerAwsCall } from './listeners/aws';
import type { HttpAnswer, HttpCaller } from './listeners/http-answer';
import { answerKubernetesCall } from './listeners/kubernetes';
import type { Tripwires } from './tripwires';

/** What every `/r/<token>` answers, tripwire or not: an ordinary page that gives nothing away. */
const ORDINARY_PAGE =
  '<!doctype html><html><head><meta charset="utf-8"><title>Document</title></head><body></body></html>';

/** Who sent an HTTP request, in the plain values the tripwire listeners take. */
export function callerOf(req: Request): HttpCaller {
  return {
    ip: req.ip ?? '',
    userAgent: req.get('user-agent') ?? '',
    requestId: requestIdOf(req) || null,
  };
}

/** The same, shaped for `Tripwires.recordHit`. */
export function presenterOf(req: Request) {
  const { ip, userAgent, requestId } = callerOf(req);
  return { client: { ip, userAgent }, requestId };
}

const send = (res: express.Response, answer: HttpAnswer) =>
  void res.status(answer.status).set(answer.headers).send(answer.body);

/**
 * The tripwire traffic, mounted ahead of any credential check so that whatever headers come with
 * it, it answers as its decoy would: `/r/<token>` (URL tripwires: an ordinary page for any token),
 * `/aws` (the decoy AWS endpoint of planted profiles) and `/k8s` (the decoy Kubernetes API of
 * planted kubeconfigs). Each answers only after the hit, if any, is handed to the tripwires.
 */
export function tripwireRoutes(tripwires: Tripwires): Router {
  const router = Router();
  router.get('/r/:token', async (req, res) => {
    await tripwires.recordHit({
      secrets: [urlToken(req.params.token)],
      via: 'url',
      ...presenterOf(req),
    });
    res.set('Cache-Control', 'no-store').type('html').send(ORDINARY_PAGE);
  });
  router.all(['/aws', '/aws/{*rest}'], async (req, res) => {
    const credential = req.query['X-Amz-Credential'];
    const answer = await answerAwsCall(tripwires, {
      ...callerOf(req),
      authorization: req.get('authorization') ?? '',
      queryCredential: typeof credential === 'string' ? credential : '',
      contentType: req.get('content-type') ?? '',
    });
    send(res, answer);
  });
  router.all(['/k8s', '/k8s/{*rest}'], async (req, res) => {
    const answer = await answerKubernetesCall(tripwires, {
      ...callerOf(req),
      authorization: req.get('authorization') ?? '',
    });
    send(res, answer);
  });
  return router;
}

/**
 * The public tripwire listener (`TRIPWIRE_PORT`): only the tripwire routes, nothing of the API,
 * console, /metrics or /docs; anything else is a bare 404, and a failure a bare 500.
 */
export function createTripwireApp(
  tripwires: Tripwires,
  trustProxy: boolean | number | string[],
  log: Logger,
): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxy);
  app.use(tripwireRoutes(tripwires));
  app.use((_req, res) => void res.status(404).type('text').send('Not Found'));
  app.use(((err, _req, res, _next) => {
    log.error({ err }, 'tripwire listener: request failed');
    res.status(500).type('text').send('Internal Server Error');
  }) as express.ErrorRequestHandler);
  return app;
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
