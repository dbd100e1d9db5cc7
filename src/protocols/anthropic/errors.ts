/**
 * Anthropic errors: `{"type":"error","error":{"type","message",
 * "details"?}}` as the body of a non-2xx answer, or as the data of an `event: error` mid-stream.
 *
 * The status policy is the shared one (docs/protocols.md): 529 `overloaded_error` and
 * every 5xx are retryable (another endpoint may answer), 429 is retryable with its retry-after, and a
 * 401/403 becomes a non-retryable 502 — the provider rejected the gateway's own key, which only the
 * operator can fix. One Anthropic case differs: a 429 whose `details.error_code` is
 * `enforced_spend_limit_reached` is the operator's provider account hitting its spend limit, not a
 * rate limit a wait would lift; it is reported like a credential problem, non-retryable.
 * @see https://docs.anthropic.com/en/api/errors
 */
import { errors, type GatewayError } from '../../core/errors.ts';
import { bodyExcerpt, upstreamReportedError, upstreamStatusError, type UpstreamHeaders } from '../transport/upstream-errors.ts';
import type { AnthropicErrorWire } from './wire.ts';

const SPEND_LIMIT = 'enforced_spend_limit_reached';

export function parseAnthropicError(status: number, headers: UpstreamHeaders, bodyText: string): GatewayError {
  const error = errorObject(bodyText);
  if (status === 429 && error?.details?.error_code === SPEND_LIMIT) {
    return errors.upstreamSpendLimit();
  }
  return upstreamStatusError({ status, headers, message: error?.message ?? bodyExcerpt(bodyText) });
}

/** An `event: error` inside a stream: the status is implied by the error type. */
export function anthropicStreamError(error: AnthropicErrorWire | undefined): GatewayError {
  return upstreamReportedError(impliedStatus(error?.type), error?.message);
}

const STATUS_BY_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

function impliedStatus(type: string | undefined): number {
  return (type !== undefined && STATUS_BY_TYPE[type]) || 500;
}

function errorObject(bodyText: string): AnthropicErrorWire | undefined {
  try {
    const error = (JSON.parse(bodyText) as { error?: unknown } | null)?.error;
    return typeof error === 'object' && error !== null ? (error as AnthropicErrorWire) : undefined;
  } catch {
    return undefined;
  }
}
