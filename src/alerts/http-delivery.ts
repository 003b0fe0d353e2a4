import type { LookupAddress, LookupOptions } from 'node:dns';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { Agent, request } from 'undici';
import type { SafeTarget } from './address-safety';

/** The spec's per-attempt limit is 10 s; the request is cut a little earlier so the attempt is recorded within it. */
export const REQUEST_TIMEOUT_MS = 9_500;

export type AttemptResult =
  | { kind: 'response'; status: number }
  | { kind: 'network-error'; message: string }
  | { kind: 'timeout' };

export type Verdict = 'delivered' | 'retry' | 'give-up';

/** One attempt on any channel kind, as recorded and acted on: HTTP status or SMTP reply code. */
export interface Attempt {
  verdict: Verdict;
  status: number | null;
  error: string | null;
}

const RETRYABLE_4XX = new Set([408, 409, 425, 429]);

/** Success is a 2xx and nothing else; 3xx and most 4xx are final; 5xx, 408/409/425/429 and network errors retry. */
export function classify(result: AttemptResult): Verdict {
  if (result.kind !== 'response') return 'retry';
  const { status } = result;
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 500 || RETRYABLE_4XX.has(status)) return 'retry';
  return 'give-up';
}

function describeAttempt(result: AttemptResult): string {
  if (result.kind === 'response') return `HTTP ${result.status}`;
  if (result.kind === 'timeout') return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  return result.message;
}

export function httpAttempt(result: AttemptResult): Attempt {
  const verdict = classify(result);
  return {
    verdict,
    status: result.kind === 'response' ? result.status : null,
    error: verdict === 'delivered' ? null : describeAttempt(result),
  };
}

type LookupCallback = (
  err: Error | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

const tracer = trace.getTracer('tripwire-delivery');

/**
 * POSTs to the address that was checked, whatever DNS says now: the connection's lookup is pinned,
 * while TLS still verifies the certificate against the URL's host name. Redirects are never followed.
 * Traced as one client span (inside the activity's span); it names the host only, as webhook paths
 * often hold the channel's secret, and sends no trace headers to the receiver.
 */
export function postOnce(
  target: SafeTarget,
  body: string,
  headers: Record<string, string>,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<AttemptResult> {
  const attributes = { 'server.address': target.url.hostname, 'http.request.method': 'POST' };
  return tracer.startActiveSpan(
    'alert delivery attempt',
    { kind: SpanKind.CLIENT, attributes },
    async (span) => {
      const result = await post(target, body, headers, timeoutMs);
      if (result.kind === 'response') span.setAttribute('http.response.status_code', result.status);
      const verdict = classify(result);
      span.setAttribute('tripwire.delivery.verdict', verdict);
      if (verdict !== 'delivered') span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      return result;
    },
  );
}

async function post(
  target: SafeTarget,
  body: string,
  headers: Record<string, string>,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<AttemptResult> {
  const pinned = (_host: string, options: LookupOptions, callback: LookupCallback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const dispatcher = new Agent({ connect: { lookup: pinned }, pipelining: 0 });
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    const response = await request(target.url, {
      method: 'POST',
      body,
      headers,
      dispatcher,
      signal: deadline,
    });
    await response.body.dump();
    return { kind: 'response', status: response.statusCode };
  } catch (err) {
    if (deadline.aborted) return { kind: 'timeout' };
    const cause =
      err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return {
      kind: 'network-error',
      message: `${err instanceof Error ? err.message : String(err)}${cause}`,
    };
  } finally {
    await dispatcher.close().catch(() => undefined);
  }
}
