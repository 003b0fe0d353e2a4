/**
 * Errors in the service's own words. Services and repositories throw these and know nothing of
 * HTTP; `src/http/errors.ts` is the one place that turns a kind into a status code and headers.
 */

/** Structured `detail` bodies carry a stable `error` code (see the spec's Errors section). */
export type ErrorDetail = string | ({ error: string } & Record<string, unknown>);

/** What kind of failure it is, which decides how any interface (HTTP, CLI) reports it. */
export type ErrorKind =
  /** The request itself is malformed (not a field's value): a broken encoding, an aborted body. */
  | 'malformed'
  /** A value the caller sent breaks a rule; the detail names the field. */
  | 'invalid'
  /** No credential, or one that proves nothing. */
  | 'unauthenticated'
  /** The caller is known but may not do this (a missing scope, another account's record). */
  | 'forbidden'
  /** The record does not exist (or is not the caller's to know about). */
  | 'not_found'
  /** The record's state forbids it now (already exists, still in progress). */
  | 'conflict'
  /** The body is larger than allowed. */
  | 'too_large'
  /** The body is in a media type or encoding the operation does not take. */
  | 'unsupported_media_type'
  /** A plan allowance (monthly or daily) is spent. */
  | 'quota_exceeded'
  /** Too many attempts in a short time; `retryAfterSeconds` says when to try again. */
  | 'rate_limited'
  /** A dependency did not answer; retrying shortly may work. */
  | 'unavailable'
  /** The work did not finish in the time allowed. */
  | 'timed_out';

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly detail: ErrorDetail,
    /** When the caller may usefully try again (rate limits, unavailable dependencies). */
    readonly retryAfterSeconds?: number,
  ) {
    super(typeof detail === 'string' ? detail : detail.error);
    this.name = 'DomainError';
  }
}
