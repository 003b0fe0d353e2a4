import { z } from 'zod';
import type { Tripwires } from '../tripwires';
import type { HttpAnswer, HttpCaller } from './http-answer';

export interface KubernetesCall extends HttpCaller {
  authorization: string;
}

/** A Kubernetes `Status` object, as the decoy answers it (for the OpenAPI document). */
export const kubernetesStatusView = z
  .object({
    kind: z.literal('Status'),
    apiVersion: z.literal('v1'),
    metadata: z.object({}),
    status: z.literal('Failure'),
    message: z.string(),
    reason: z.string(),
    code: z.number().int(),
  })
  .meta({ id: 'KubernetesStatus' });

/** The body an API server sends for a token it does not know. */
const UNAUTHORIZED = JSON.stringify({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Unauthorized',
  reason: 'Unauthorized',
  code: 401,
} satisfies z.output<typeof kubernetesStatusView>);

/**
 * The decoy Kubernetes API (a planted kubeconfig's cluster server): a request presenting a decoy
 * token (bearer, or the password of basic auth) fires; every request, whatever it presents, gets
 * the 401 Status an API server answers for an unknown token.
 */
export async function answerKubernetesCall(
  tripwires: Tripwires,
  call: KubernetesCall,
): Promise<HttpAnswer> {
  const [scheme = '', credential = ''] = call.authorization.split(/\s+/, 2);
  const secrets =
    scheme.toLowerCase() === 'bearer'
      ? [credential]
      : scheme.toLowerCase() === 'basic'
        ? Buffer.from(credential, 'base64').toString().split(':', 2)
        : [];
  if (secrets.some(Boolean)) {
    await tripwires.recordHit({
      secrets,
      via: 'kubernetes_api',
      client: { ip: call.ip, userAgent: call.userAgent },
      requestId: call.requestId,
    });
  }
  return {
    status: 401,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-cache, private' },
    body: UNAUTHORIZED,
  };
}
