/**
 * Upstream failures → gateway errors, shared by every HTTP protocol (docs/protocols.md). A protocol's
 * own errors.ts only digs the message and param out of its provider's error body; the status policy
 * (which gateway status, which code, whether another endpoint may succeed, how long to wait) lives
 * here once.
 */
import { errors, type GatewayError } from '../../core/errors.ts';

export type UpstreamHeaders = Readonly<Record<string, string | undefined>>;

export interface UpstreamFailure {
  readonly status: number;
  readonly headers: UpstreamHeaders;
  /** The provider's own message, when its body had one. */
  readonly message?: string;
  /** The provider's `param`, when its error names one (only surfaced on client errors). */
  readonly param?: string | null;
  /** The error came inside a 200 (a stream event, a failed response): `status` is only implied. */
  readonly reported?: boolean;
  /**
   * The provider says the operator's account has no quota, credit or spend left (OpenAI's
   * `insufficient_quota`, Anthropic's `billing_error`): whatever its status, not the client's fault
   * and not lifted by a retry (docs/errors.md, "Upstream errors").
   */
  readonly accountExhausted?: boolean;
}

/**
 * Whether a fresh attempt (here: another endpoint) may succeed. Follows the rule the official SDKs
 * retry by: 408, 409, 429 and every 5xx (Anthropic's 529 included), unless the provider
 * says otherwise with `x-should-retry`.
 */
export function isRetryableStatus(status: number, headers: UpstreamHeaders): boolean {
  const hint = headers['x-should-retry'];
  if (hint === 'true') return true;
  if (hint === 'false') return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Seconds to wait before retrying, from `retry-after-ms` (OpenAI, Anthropic) or `retry-after`
 * (seconds or an HTTP date). Undefined when absent or unreadable.
 */
export function parseRetryAfter(headers: UpstreamHeaders, now: number = Date.now()): number | undefined {
  const milliseconds = Number(headers['retry-after-ms']);
  if (headers['retry-after-ms'] !== undefined && Number.isFinite(milliseconds) && milliseconds >= 0) {
    return Math.ceil(milliseconds / 1000);
  }
  const value = headers['retry-after']?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value));
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** The gateway error for a non-2xx upstream answer. */
export function upstreamStatusError(failure: UpstreamFailure): GatewayError {
  const { status, headers } = failure;
  const { message } = failure;
  if (failure.accountExhausted === true) return errors.upstreamAccountExhausted(message);
  const retryable = isRetryableStatus(status, headers);
  if (status === 429) return errors.upstreamRateLimited(message, retryable, parseRetryAfter(headers));
  if (status === 408 || status === 504) return errors.upstreamTimedOut(message, retryable);
  if (status === 503 || status === 529) return errors.upstreamOverloaded(message, retryable, parseRetryAfter(headers));
  // A bad or unauthorised provider key is the operator's problem, not the client's.
  if (status === 401 || status === 403) return errors.upstreamCredentialsRejected(status, retryable);
  if (status === 413) return errors.upstreamTooLarge(message, retryable);
  if (status === 400 || status === 422) return errors.upstreamRejected(message, failure.param ?? null, retryable);
  return failure.reported ? errors.upstreamReported(message, retryable) : errors.upstreamStatus(status, message, retryable);
}

/** An error the provider reported inside a 200 stream or body, mapped by the status it implies. */
export function upstreamReportedError(status: number, message: string | undefined, accountExhausted = false): GatewayError {
  return upstreamStatusError({ status, headers: {}, message, reported: true, accountExhausted });
}

/** A short piece of an error body that is not the provider's JSON (an HTML page from a proxy, say). */
export function bodyExcerpt(text: string): string | undefined {
  const trimmed = text.trim();
  return trimmed === '' ? undefined : trimmed.slice(0, 200);
}
