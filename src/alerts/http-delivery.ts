import type { LookupAddress, LookupOptions } from 'node:dns';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { LRUCache } from 'lru-cache';
import { Agent, request } from 'undici';
import type { SafeTarget } from './address-safety';
import type { Verdict } from '../../workflows/shared';

/** The spec's per-attempt limit is 10 s; the request is cut a little earlier so the attempt is recorded within it. */
export const REQUEST_TIMEOUT_MS = 9_500;

/** The start of a receiver's answer: at most `ANSWER_EXCERPT_BYTES` of its body, and its content type. */
export interface AnswerExcerpt {
  contentType: string | null;
  body: string;
}

/** How much of an answer is kept; the rest is never read. */
export const ANSWER_EXCERPT_BYTES = 1024;

export type AttemptResult =
  | { kind: 'response'; status: number; answer?: AnswerExcerpt }
  | { kind: 'network-error'; message: string }
  | { kind: 'timeout' };

export type { Verdict } from '../../workflows/shared';

/** One attempt on any channel kind, as recorded and acted on: HTTP status or SMTP reply code. */
export interface Attempt {
  verdict: Verdict;
  status: number | null;
  error: string | null;
  /** What the receiver answered, when it answered (HTTP kinds). */
  answer?: AnswerExcerpt;
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
    ...(result.kind === 'response' && result.answer && { answer: result.answer }),
  };
}

/**
 * The first `ANSWER_EXCERPT_BYTES` of a body as text; the connection is dropped rather than the
 * rest read, so a receiver that answers endlessly costs no more than one that answers briefly.
 */
async function readStart(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= ANSWER_EXCERPT_BYTES) break;
  }
  body.destroy();
  // A multi-byte character cut at the limit becomes U+FFFD rather than failing.
  return Buffer.concat(chunks).subarray(0, ANSWER_EXCERPT_BYTES).toString('utf8');
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

/**
 * One keep-alive agent per receiver origin and checked address, so consecutive attempts to a
 * channel reuse its TLS connection instead of a handshake each. The agent's lookup is pinned to the
 * address it was made for; the address is still checked before every attempt, and a receiver whose
 * name now resolves elsewhere gets another agent. Idle connections close after undici's
 * keep-alive timeout (4 s, or the receiver's shorter hint) and never hold a process open.
 */
const agents = new LRUCache<string, Agent>({
  max: 256,
  dispose: (agent) => void agent.close().catch(() => undefined),
});

function pinnedAgent(target: SafeTarget): Agent {
  const key = `${target.url.origin} ${target.address}`;
  let agent = agents.get(key);
  if (!agent) {
    const pinned = (_host: string, options: LookupOptions, callback: LookupCallback) => {
      if (options.all) callback(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    };
    agent = new Agent({ connect: { lookup: pinned } });
    agents.set(key, agent);
  }
  return agent;
}

async function post(
  target: SafeTarget,
  body: string,
  headers: Record<string, string>,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<AttemptResult> {
  // Not `AbortSignal.timeout`: its timer outlives the request and, firing, builds a DOMException
  // with a stack trace after every delivery (about 20 µs each in a profile of the worker).
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  try {
    const response = await request(target.url, {
      method: 'POST',
      body,
      headers,
      dispatcher: pinnedAgent(target),
      signal: deadline.signal,
    });
    const excerpt = await readStart(response.body);
    const type = response.headers['content-type'];
    return {
      kind: 'response',
      status: response.statusCode,
      answer: { contentType: (Array.isArray(type) ? type[0] : type) ?? null, body: excerpt },
    };
  } catch (err) {
    if (deadline.signal.aborted) return { kind: 'timeout' };
    const cause =
      err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return {
      kind: 'network-error',
      message: `${err instanceof Error ? err.message : String(err)}${cause}`,
    };
  } finally {
    clearTimeout(timer);
  }
}
