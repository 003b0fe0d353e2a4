import express, { Router, type Express, type Request, type RequestHandler } from 'express';
import type { RefusedCredential } from '../auth/api-key-auth';
import { authorization } from '../auth/authorization';
import { DomainError } from '../errors';
import { bind, mountOperations, operationsFor, type Auth } from '../http/operation';
import { requestIdOf } from '../http/request-id';
import type { Logger } from '../logger';
import { urlToken } from './decoys';
import { answerAwsCall } from './listeners/aws';
import type { HttpAnswer, HttpCaller } from './listeners/http-answer';
import { answerKubernetesCall, kubernetesStatusView } from './listeners/kubernetes';
import type { Presenter, Tripwires } from './tripwires';

/** What every `/r/<token>` answers, tripwire or not: an ordinary page that gives nothing away. */
const ORDINARY_PAGE =
  '<!doctype html><html><head><meta charset="utf-8"><title>Document</title></head><body></body></html>';

/** Who sent an HTTP request, in the plain values the tripwire listeners take. */
export function httpCallerOf(req: Request): HttpCaller {
  return {
    ip: req.ip ?? '',
    userAgent: req.get('user-agent') ?? '',
    requestId: requestIdOf(req) || null,
  };
}

/** The same, shaped for `Tripwires.recordHit`. */
export function presenterOf(req: Request): Presenter {
  const { ip, userAgent, requestId } = httpCallerOf(req);
  return { client: { ip, userAgent }, requestId };
}

/** The tripwire listener takes no credentials of this service: every operation is public. */
const NO_AUTHENTICATION: Record<Auth, RequestHandler[]> = {
  none: [],
  session: [],
  apiKey: [],
  sessionOrApiKey: [],
  refreshCookie: [],
};

const send = (res: express.Response, answer: HttpAnswer) =>
  void res.status(answer.status).set(answer.headers).send(answer.body);

const operation = operationsFor<Tripwires>('Tripwires');

/**
 * The tripwire traffic, mounted ahead of any credential check so that whatever headers come with
 * it, it answers as its decoy would: `/r/<token>` (URL tripwires: an ordinary page for any token),
 * `/aws` (the decoy AWS endpoint of planted profiles) and `/k8s` (the decoy Kubernetes API of
 * planted kubeconfigs). Each answers only after the hit, if any, is handed to the tripwires.
 */
export const tripwireOperations = [
  operation({
    operationId: 'followUrlTripwire',
    method: 'get',
    path: '/r/{token}',
    summary: 'URL tripwire: an ordinary page for any token, whatever headers come with it',
    description:
      'Every token, planted or not, gets the same ordinary page (also on `TRIPWIRE_PORT`).',
    auth: 'none',
    beforeKeyLayer: true,
    success: { status: 200, description: 'An ordinary page', contentType: 'text/html' },
    handler: async ({ params, req, res }, tripwires) => {
      await tripwires.recordHit({
        secrets: [urlToken(params.token!)],
        via: 'url',
        ...presenterOf(req),
      });
      res.set('Cache-Control', 'no-store').type('html').send(ORDINARY_PAGE);
    },
  }),
  operation({
    operationId: 'callDecoyAws',
    method: 'post',
    path: '/aws/',
    expressPath: ['/aws', '/aws/{*rest}'],
    anyMethod: true,
    summary:
      'Decoy AWS endpoint (the endpoint_url of planted AWS profiles; any method and path below /aws): a call signed with a decoy key id fires',
    auth: 'none',
    beforeKeyLayer: true,
    success: {
      status: 403,
      description:
        'InvalidClientTokenId (S3: InvalidAccessKeyId), as AWS answers an unknown key, in the protocol the client speaks (query XML or JSON), canary or not',
      contentType: 'text/xml',
    },
    handler: async ({ req, res }, tripwires) => {
      const credential = req.query['X-Amz-Credential'];
      const answer = await answerAwsCall(tripwires, {
        ...httpCallerOf(req),
        authorization: req.get('authorization') ?? '',
        queryCredential: typeof credential === 'string' ? credential : '',
        contentType: req.get('content-type') ?? '',
      });
      send(res, answer);
    },
  }),
  operation({
    operationId: 'callDecoyKubernetes',
    method: 'get',
    path: '/k8s/{path}',
    expressPath: ['/k8s', '/k8s/{*rest}'],
    anyMethod: true,
    summary:
      'Decoy Kubernetes API (the server of planted kubeconfigs; any method and path below /k8s): a request presenting a decoy token fires',
    auth: 'none',
    beforeKeyLayer: true,
    success: { status: 401, description: 'The API server’s Unauthorized Status, canary or not' },
    response: kubernetesStatusView,
    handler: async ({ req, res }, tripwires) => {
      const answer = await answerKubernetesCall(tripwires, {
        ...httpCallerOf(req),
        authorization: req.get('authorization') ?? '',
      });
      send(res, answer);
    },
  }),
];

/** The tripwire operations alone, as a router (the public listener and the API both serve them). */
export function tripwireRouter(tripwires: Tripwires): Router {
  const router = Router();
  mountOperations(router, bind(tripwireOperations, tripwires), NO_AUTHENTICATION);
  return router;
}

/**
 * The public tripwire listener (`TRIPWIRE_PORT`): only the tripwire routes, nothing of the API,
 * console, /metrics or /docs; anything else is a bare 404, a hit the journal could not write a
 * 503 with its `detail`, and any other failure a bare 500.
 */
export function createTripwireApp(
  tripwires: Tripwires,
  trustProxy: boolean | number | string[],
  log: Logger,
): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxy);
  app.use(tripwireRouter(tripwires));
  app.use((_req, res) => void res.status(404).type('text').send('Not Found'));
  app.use(((err, _req, res, _next) => {
    // A hit the journal could not write: refused, as the API refuses it (retry shortly).
    if (err instanceof DomainError && err.kind === 'unavailable') {
      res.status(503).set('Retry-After', String(err.retryAfterSeconds ?? 5));
      return void res.json({ detail: err.detail });
    }
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
