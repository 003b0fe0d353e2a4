import { createHash } from 'node:crypto';
import express, { Router, type Express, type Request, type RequestHandler } from 'express';
import { z } from 'zod';
import type { RefusedCredential } from '../auth/api-key-auth';
import { authorization } from '../auth/authorization';
import { DomainError } from '../errors';
import { bind, mountOperations, operationsFor, type Auth } from '../http/operation';
import { requestIdOf } from '../http/request-id';
import type { Logger } from '../logger';
import { urlToken } from './decoys';
import { TRANSPARENT_GIF } from './kinds/web-image';
import { answerAwsCall } from './listeners/aws';
import type { HttpAnswer, HttpCaller } from './listeners/http-answer';
import { answerKubernetesCall, kubernetesStatusView } from './listeners/kubernetes';
import type { CanariesRepository } from './canaries.repository';
import type { Presenter, Tripwires } from './tripwires';

/** What every `/r/<token>` answers, tripwire or not: an ordinary page that gives nothing away. */
const ORDINARY_PAGE =
  '<!doctype html><html><head><meta charset="utf-8"><title>Document</title></head><body></body></html>';

/**
 * The slow redirect's script: what the browser tells about itself, then on to `go` (relative to
 * the page's own path, so one script serves every token on every listener).
 */
const SLOW_REDIRECT_SCRIPT = `(function(){var n=navigator,d=["tz="+Intl.DateTimeFormat().resolvedOptions().timeZone,"lang="+n.language,"screen="+screen.width+"x"+screen.height,"platform="+n.platform,"cores="+n.hardwareConcurrency].join("; ");location.replace(location.pathname.replace(/\\/$/,"")+"/go?d="+encodeURIComponent(d));})();`;
const slowRedirectPage = (token: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>Redirecting…</title><noscript><meta http-equiv="refresh" content="0;url=${encodeURIComponent(token)}/go"></noscript></head><body><script>${SLOW_REDIRECT_SCRIPT}</script></body></html>`;
/** Only that script runs, whatever the listener's own policy. */
const SLOW_REDIRECT_CSP = `default-src 'none'; script-src 'sha256-${createHash('sha256').update(SLOW_REDIRECT_SCRIPT).digest('base64')}'`;

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

/** What the tripwire routes need: the one entry point for hits, and the canaries for what a hit answers (a redirect's destination, a web image). */
export interface TripwireRouteDeps {
  tripwires: Tripwires;
  canaries: CanariesRepository;
}

const operation = operationsFor<TripwireRouteDeps>('Tripwires');

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
    handler: async ({ params, req, res }, { tripwires }) => {
      await tripwires.recordHit({
        secrets: [urlToken(params.token!)],
        via: 'url',
        ...presenterOf(req),
      });
      res.set('Cache-Control', 'no-store').type('html').send(ORDINARY_PAGE);
    },
  }),
  operation({
    operationId: 'followRedirectTripwire',
    method: 'get',
    path: '/f/{token}',
    summary: 'Redirect tripwire: records the hit, then redirects to the destination its owner set',
    description:
      'A planted `fast_redirect` answers 302 to its `redirect_url`; any other token gets the ordinary page of `/r/<token>`, after the same lookup and one read of a canary either way.',
    auth: 'none',
    beforeKeyLayer: true,
    success: {
      status: 302,
      description: 'The redirect (the ordinary page, 200, for other tokens)',
      contentType: 'text/html',
    },
    handler: async ({ params, req, res }, deps) => {
      const destination = await redirectFor(deps, params.token!, presenterOf(req));
      res.set('Cache-Control', 'no-store');
      if (destination) res.redirect(302, destination);
      else res.type('html').send(ORDINARY_PAGE);
    },
  }),
  operation({
    operationId: 'openSlowRedirectTripwire',
    method: 'get',
    path: '/s/{token}',
    summary: 'Slow redirect tripwire: a page whose script reads browser details, then follows on',
    description:
      'The same page for every token, planted or not, and no lookup: its script goes on to `/s/<token>/go` with what it read (without JavaScript, at once and without details).',
    auth: 'none',
    beforeKeyLayer: true,
    success: { status: 200, description: 'The page', contentType: 'text/html' },
    handler: ({ params, res }) => {
      res
        .set('Cache-Control', 'no-store')
        .set('Content-Security-Policy', SLOW_REDIRECT_CSP)
        .type('html')
        .send(slowRedirectPage(params.token!));
    },
  }),
  operation({
    operationId: 'followSlowRedirectTripwire',
    method: 'get',
    path: '/s/{token}/go',
    summary: 'Slow redirect tripwire: records the hit with the browser details, then redirects',
    description:
      'A planted `slow_redirect` answers 302 to its `redirect_url`; any other token gets the ordinary page of `/r/<token>`, after the same lookup and read. `d` (what the page read) follows the user agent in the recorded hit.',
    auth: 'none',
    beforeKeyLayer: true,
    query: z.object({ d: z.string().max(400).optional() }).loose(),
    success: {
      status: 302,
      description: 'The redirect (the ordinary page, 200, for other tokens)',
      contentType: 'text/html',
    },
    handler: async ({ params, query, req, res }, deps) => {
      const presenter = presenterOf(req);
      const details = (query.d ?? '').replace(/[^\w\-/.+:=; ]/g, '').slice(0, 300);
      if (details) presenter.client.userAgent = `${presenter.client.userAgent} [${details}]`;
      const destination = await redirectFor(deps, params.token!, presenter);
      res.set('Cache-Control', 'no-store');
      if (destination) res.redirect(302, destination);
      else res.type('html').send(ORDINARY_PAGE);
    },
  }),
  operation({
    operationId: 'fetchRepositoryTripwire',
    method: 'get',
    path: '/v/{token}/{path}',
    expressPath: ['/v/:token', '/v/:token/{*rest}'],
    anyMethod: true,
    summary:
      'Repository tripwire (an svn:externals URL; any method and path below the token): every request fires',
    description:
      'Every token, planted or not, gets the same 404, as a repository path that does not exist.',
    auth: 'none',
    beforeKeyLayer: true,
    success: { status: 404, description: 'Not Found, for any token', contentType: 'text/plain' },
    handler: async ({ params, req, res }, { tripwires }) => {
      await tripwires.recordHit({
        secrets: [urlToken(params.token!)],
        via: 'url',
        ...presenterOf(req),
      });
      res.status(404).set('Cache-Control', 'no-store').type('text').send('Not Found');
    },
  }),
  operation({
    operationId: 'loadImageTripwire',
    method: 'get',
    path: '/i/{token}',
    summary: 'Web image tripwire: records the hit, then answers the image',
    description:
      'A planted `web_image` answers its image (the owner’s, or a 1×1 transparent GIF); any other token gets that GIF, after the same lookup and one read of a canary either way.',
    auth: 'none',
    beforeKeyLayer: true,
    success: { status: 200, description: 'The image', contentType: 'image/gif' },
    handler: async ({ params, req, res }, { tripwires, canaries }) => {
      const canaryId = await tripwires.recordHit({
        secrets: [urlToken(params.token!.replace(/\.(png|gif|jpe?g)$/i, ''))],
        via: 'url',
        ...presenterOf(req),
      });
      const image = await canaries.artifact(canaryId ?? NO_CANARY, { kind: 'web_image' });
      res
        .set('Cache-Control', 'no-store')
        .type(image?.contentType ?? 'image/gif')
        .send(image?.body ?? TRANSPARENT_GIF);
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
    handler: async ({ req, res }, { tripwires }) => {
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
    handler: async ({ req, res }, { tripwires }) => {
      const answer = await answerKubernetesCall(tripwires, {
        ...httpCallerOf(req),
        authorization: req.get('authorization') ?? '',
      });
      send(res, answer);
    },
  }),
];

/** An id no canary has: an unknown token's answer costs the same read as a live one's. */
const NO_CANARY = 'cnr_none';

/** Records a redirect tripwire's hit; its destination, or null for any other token. */
async function redirectFor(
  { tripwires, canaries }: TripwireRouteDeps,
  token: string,
  presenter: Presenter,
): Promise<string | null> {
  const canaryId = await tripwires.recordHit({
    secrets: [urlToken(token)],
    via: 'url',
    ...presenter,
  });
  const canary = await canaries.findById(canaryId ?? NO_CANARY);
  return canary?.redirectUrl ?? null;
}

/** The tripwire operations alone, as a router (the public listener and the API both serve them). */
export function tripwireRouter(deps: TripwireRouteDeps): Router {
  const router = Router();
  mountOperations(router, bind(tripwireOperations, deps), NO_AUTHENTICATION);
  return router;
}

/**
 * The public tripwire listener (`TRIPWIRE_PORT`): only the tripwire routes, nothing of the API,
 * console, /metrics or /docs; anything else is a bare 404, a hit the journal could not write a
 * 503 with its `detail`, and any other failure a bare 500.
 */
export function createTripwireApp(
  deps: TripwireRouteDeps,
  trustProxy: boolean | number | string[],
  log: Logger,
): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', trustProxy);
  app.use(tripwireRouter(deps));
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
