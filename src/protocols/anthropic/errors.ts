/**
 * Anthropic errors: `{"type":"error","error":{"type","message","details"?}}` as the body of a
 * non-2xx answer, or as the data of an `event: error` mid-stream (an `overloaded_error` often
 * comes right after `message_start`, before any content: the pipeline can still fall back then).
 *
 * The status policy is the shared one (docs/protocols.md): 529 `overloaded_error` and
 * every 5xx are retryable (another endpoint may answer), 429 is retryable with its retry-after, and a
 * 401/403 becomes a non-retryable 502 — the provider rejected the gateway's own key, which only the
 * operator can fix. The operator's account out of money is its own case (docs/errors.md, "Upstream
 * errors"), whatever the status it came with: a `billing_error`, a 429 whose `details.error_code`
 * is `enforced_spend_limit_reached` (the account's spend limit, which no wait lifts), and the 400
 * the API answers when the credit balance is too low.
 * @see https://docs.anthropic.com/en/api/errors
 */
import type { GatewayError } from '../../core/errors.ts';
import { bodyExcerpt, upstreamReportedError, upstreamStatusError, type UpstreamHeaders } from '../transport/upstream-errors.ts';

/** An Anthropic error object, every field as untrusted as the body it came in. */
interface AnthropicErrorObject {
  type?: unknown;
  message?: unknown;
  details?: unknown;
}

export function parseAnthropicError(status: number, headers: UpstreamHeaders, bodyText: string): GatewayError {
  const error = errorObject(bodyText);
  return upstreamStatusError({ status, headers, message: messageOf(error) ?? bodyExcerpt(bodyText), accountExhausted: accountExhausted(error) });
}

/** An `event: error` inside a stream (its data's `error`): the status is implied by the error type. */
export function anthropicStreamError(error: unknown): GatewayError {
  const object = asObject(error);
  const type = typeof object?.type === 'string' ? object.type : undefined;
  return upstreamReportedError(impliedStatus(type), messageOf(object), accountExhausted(object));
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
  return (type !== undefined && Object.hasOwn(STATUS_BY_TYPE, type) && STATUS_BY_TYPE[type]) || 500;
}

const LOW_CREDIT = /credit balance is too low/i;

function accountExhausted(error: AnthropicErrorObject | undefined): boolean {
  if (error === undefined) return false;
  if (error.type === 'billing_error') return true;
  if ((asObject(error.details) as { error_code?: unknown } | undefined)?.error_code === 'enforced_spend_limit_reached') return true;
  const message = messageOf(error);
  return error.type === 'invalid_request_error' && message !== undefined && LOW_CREDIT.test(message);
}

function messageOf(error: AnthropicErrorObject | undefined): string | undefined {
  return typeof error?.message === 'string' && error.message !== '' ? error.message : undefined;
}

function asObject(value: unknown): AnthropicErrorObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as AnthropicErrorObject) : undefined;
}

function errorObject(bodyText: string): AnthropicErrorObject | undefined {
  try {
    return asObject((asObject(JSON.parse(bodyText)) as { error?: unknown } | undefined)?.error);
  } catch {
    return undefined;
  }
}
