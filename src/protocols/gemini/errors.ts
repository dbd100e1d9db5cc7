/**
 * Gemini errors (docs/protocols.md): `{"error":{"code","message","status","details"}}`
 * as the body of a non-2xx answer (the streamed-array form wraps it in an array), or as a `data:`
 * chunk mid-stream. The status policy is the shared one: RESOURCE_EXHAUSTED (429), UNAVAILABLE and
 * INTERNAL are retryable, INVALID_ARGUMENT (a missing thought signature included) is the client's
 * 400, and a rejected API key is the operator's problem (a non-retryable 502). Gemini reports a bad
 * key as a 400 whose ErrorInfo reason is API_KEY_INVALID; it is treated as the 401 it means, so the
 * client never sees a provider-key error as its own. A quota of a day (a QuotaFailure whose
 * `quotaId` counts per day) or billing turned off (ErrorInfo `BILLING_DISABLED`) is the operator's
 * account exhausted (docs/errors.md, "Upstream errors"), not a rate limit a short wait lifts.
 */
import type { GatewayError } from '../../core/errors.ts';
import { bodyExcerpt, upstreamReportedError, upstreamStatusError, type UpstreamHeaders } from '../transport/upstream-errors.ts';
import type { GeminiErrorWire } from './wire.ts';

interface GeminiErrorBody extends GeminiErrorWire {
  details?: { '@type'?: string; retryDelay?: string; reason?: string; violations?: { quotaId?: string }[] }[];
}

export function parseGeminiError(status: number, headers: UpstreamHeaders, bodyText: string): GatewayError {
  const error = errorObject(bodyText);
  // A quota error says how long to wait in a RetryInfo detail (`"retryDelay": "36s"`) rather than
  // in a header; it is honoured like a retry-after header when no header says otherwise.
  const delay = retryDelaySeconds(error);
  const effectiveHeaders = delay !== undefined && headers['retry-after'] === undefined ? { ...headers, 'retry-after': String(delay) } : headers;
  const keyRejected = Array.isArray(error?.details) && error.details.some((detail) => detail?.reason === 'API_KEY_INVALID');
  return upstreamStatusError({
    status: keyRejected ? 401 : status,
    headers: effectiveHeaders,
    message: (typeof error?.message === 'string' ? error.message : undefined) ?? bodyExcerpt(bodyText),
    accountExhausted: accountExhausted(error),
  });
}

function accountExhausted(error: GeminiErrorBody | undefined): boolean {
  if (!Array.isArray(error?.details)) return false;
  return error.details.some(
    (detail) =>
      detail?.reason === 'BILLING_DISABLED' ||
      (Array.isArray(detail?.violations) && detail.violations.some((violation) => typeof violation?.quotaId === 'string' && /PerDay/.test(violation.quotaId))),
  );
}

/** An error inside a 200 (a stream chunk, or a whole body): the status is its code, or implied by its status name. */
export function geminiStreamError(value: unknown): GatewayError {
  const error: GeminiErrorWire = typeof value === 'object' && value !== null ? value : {};
  const code = typeof error.code === 'number' && error.code >= 400 && error.code <= 599 ? error.code : undefined;
  const named = typeof error.status === 'string' && Object.hasOwn(STATUS_BY_NAME, error.status) ? STATUS_BY_NAME[error.status] : undefined;
  return upstreamReportedError(code ?? named ?? 500, typeof error.message === 'string' ? error.message : undefined);
}

const STATUS_BY_NAME: Readonly<Record<string, number>> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};

function errorObject(bodyText: string): GeminiErrorBody | undefined {
  try {
    const parsed: unknown = JSON.parse(bodyText);
    const envelope = Array.isArray(parsed) ? parsed[0] : parsed;
    const error = (envelope as { error?: unknown } | null)?.error;
    return typeof error === 'object' && error !== null ? (error as GeminiErrorBody) : undefined;
  } catch {
    return undefined;
  }
}

function retryDelaySeconds(error: GeminiErrorBody | undefined): number | undefined {
  const details = Array.isArray(error?.details) ? error.details : [];
  const delay = details.find((detail) => typeof detail?.['@type'] === 'string' && detail['@type'].endsWith('google.rpc.RetryInfo'))?.retryDelay;
  const seconds = typeof delay === 'string' ? Number.parseFloat(delay) : NaN;
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : undefined;
}
