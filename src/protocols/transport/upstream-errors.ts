/**
 * Upstream failures → gateway errors, shared by every HTTP protocol (PROTOCOLS.md §9.9). A protocol's
 * own errors.ts only digs the message and param out of its provider's error body; the status policy
 * (which gateway status, which code, whether another endpoint may succeed, how long to wait) lives
 * here once.
 */
import { GatewayError } from '../../core/errors.ts';

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
}

/**
 * Whether a fresh attempt (here: another endpoint) may succeed. Follows the official clients' rule
 * (PROTOCOLS.md §0): 408, 409, 429 and every 5xx (Anthropic's 529 included), unless the provider
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
  const retryable = isRetryableStatus(status, headers);
  const detail = failure.message ? `: ${failure.message}` : '';
  if (status === 429) {
    return new GatewayError(429, `The upstream provider is rate limiting requests${detail}`, {
      code: 'upstream_rate_limited',
      retryable,
      retryAfterSeconds: parseRetryAfter(headers),
    });
  }
  if (status === 408 || status === 504) {
    return new GatewayError(502, `The upstream provider timed out${detail}`, { code: 'upstream_timeout', retryable });
  }
  if (status === 503 || status === 529) {
    return new GatewayError(503, `The upstream provider is overloaded or unavailable${detail}`, {
      code: 'upstream_unavailable',
      retryable,
      retryAfterSeconds: parseRetryAfter(headers),
    });
  }
  if (status === 401 || status === 403) {
    // A bad or unauthorised provider key is the operator's problem, not the client's; the provider's
    // message may quote part of the key, so it is not passed on.
    return new GatewayError(502, `The upstream provider rejected the gateway's credentials (status ${status}).`, {
      code: 'upstream_error',
      retryable,
    });
  }
  if (status === 413) {
    return new GatewayError(413, `The upstream provider rejected the request as too large${detail}`, {
      code: 'request_too_large',
      retryable,
    });
  }
  if (status === 400 || status === 422) {
    // The provider judged the request itself invalid: the client can act on its message and param.
    return new GatewayError(400, `The upstream provider rejected the request${detail}`, {
      code: 'upstream_error',
      param: failure.param ?? null,
      retryable,
    });
  }
  const what = failure.reported ? 'reported an error' : `returned status ${status}`;
  return new GatewayError(502, `The upstream provider ${what}${detail}`, {
    code: 'upstream_error',
    retryable,
  });
}

/** An error the provider reported inside a 200 stream or body, mapped by the status it implies. */
export function upstreamReportedError(status: number, message: string | undefined): GatewayError {
  return upstreamStatusError({ status, headers: {}, message, reported: true });
}

/** An upstream answer the gateway could not read (invalid JSON, an unknown shape, a cut-off body). */
export function malformedUpstream(what: string, cause?: unknown): GatewayError {
  return new GatewayError(502, `The upstream provider sent ${what}.`, { code: 'upstream_error', retryable: true, cause });
}

/** A short piece of an error body that is not the provider's JSON (an HTML page from a proxy, say). */
export function bodyExcerpt(text: string): string | undefined {
  const trimmed = text.trim();
  return trimmed === '' ? undefined : trimmed.slice(0, 200);
}
