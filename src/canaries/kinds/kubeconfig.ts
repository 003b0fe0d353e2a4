import { randomBytes } from 'node:crypto';
import { trimmedBase, type DecoySettings } from '../decoys';
import type { KindModule } from './kind';

export const kubeconfig: KindModule = {
  howToUse:
    'Save it as ~/.kube/config (or beside real kubeconfigs). Any kubectl or Kubernetes client request made with it reaches this service’s decoy Kubernetes API, fires and gets an ordinary 401. Its token presented to this service as a bearer token fires too.',
  risk: {
    base: 65,
    what: 'A decoy kubeconfig',
    action:
      'Treat the machine or store that held this kubeconfig as exposed, and check who can reach your real clusters',
  },
  make: (settings) => {
    const token = serviceAccountToken();
    return { value: kubeconfigFor(token, settings), tokens: [token] };
  },
};

/** Shaped like a service account token (a signed JWT); only this service knows it is a decoy. */
function serviceAccountToken(): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const header = part({ alg: 'RS256', kid: randomBytes(16).toString('base64url') });
  const claims = part({
    iss: 'kubernetes/serviceaccount',
    'kubernetes.io/serviceaccount/namespace': 'kube-system',
    'kubernetes.io/serviceaccount/service-account.name': 'deploy-bot',
    sub: 'system:serviceaccount:kube-system:deploy-bot',
  });
  return `${header}.${claims}.${randomBytes(256).toString('base64url')}`;
}

/** A kubeconfig whose cluster is this service's decoy Kubernetes API. */
function kubeconfigFor(token: string, settings: DecoySettings): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: production',
    '  cluster:',
    `    server: ${trimmedBase(settings)}/k8s`,
    'contexts:',
    '- name: production',
    '  context:',
    '    cluster: production',
    '    user: deploy-bot',
    '    namespace: kube-system',
    'current-context: production',
    'users:',
    '- name: deploy-bot',
    '  user:',
    `    token: ${token}`,
    '',
  ].join('\n');
}
