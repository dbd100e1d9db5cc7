/**
 * The error objects of the two OpenAI formats (chat completions and responses), read once:
 * `{"error":{"message","type","param","code"}}` as the body of a non-2xx answer (Google's compatible
 * endpoint wraps it in an array, some servers send `error` as a bare string), and the same object
 * inside a stream — as a chat `data:` chunk, as the `error` of a Responses `error` event (older
 * servers put its fields at the event's top level), or as a failed response's `error`.
 * @see https://platform.openai.com/docs/guides/error-codes
 */
import type { GatewayError } from '../core/errors.ts';
import { bodyExcerpt, upstreamReportedError, upstreamStatusError, type UpstreamHeaders } from './transport/upstream-errors.ts';

/** An OpenAI error object, every field as untrusted as the body it came in. */
export interface OpenAIErrorWire {
  message?: unknown;
  type?: unknown;
  param?: unknown;
  code?: unknown;
}

export function parseOpenAIError(status: number, headers: UpstreamHeaders, bodyText: string): GatewayError {
  const error = errorObject(bodyText);
  return upstreamStatusError({
    status,
    headers,
    message: textOf(error?.message) ?? bodyExcerpt(bodyText),
    param: textOf(error?.param) ?? null,
    accountExhausted: isQuotaError(error),
  });
}

/** An error reported inside a 200 (a stream chunk or event, a failed response), by the status its type or code implies. */
export function openAIReportedError(error: OpenAIErrorWire | undefined, fallbackMessage: string): GatewayError {
  return upstreamReportedError(impliedStatus(error), textOf(error?.message) ?? fallbackMessage, isQuotaError(error));
}

/** The object itself when it is one (a nested `error`), else undefined. */
export function asErrorObject(value: unknown): OpenAIErrorWire | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as OpenAIErrorWire) : undefined;
}

/** `insufficient_quota` (as a type or a code) is the operator's account out of quota or credit. */
function isQuotaError(error: OpenAIErrorWire | undefined): boolean {
  return error?.type === 'insufficient_quota' || error?.code === 'insufficient_quota';
}

/**
 * The codes a failed response carries (`ResponseError.code` in the SDK) that mean the request
 * itself was refused: a client error, which another endpoint would refuse too.
 */
const CLIENT_CODES =
  /^(invalid_|image_|bio_policy|data_residency_mismatch|unsupported_image_media_type|empty_image_file|failed_to_download_image|context_length_exceeded)/;

function impliedStatus(error: OpenAIErrorWire | undefined): number {
  const code = error?.code;
  if (typeof code === 'number' && code >= 400 && code <= 599) return code;
  const type = textOf(error?.type) ?? '';
  const name = textOf(code) ?? '';
  if (type.includes('rate_limit') || name.includes('rate_limit')) return 429;
  if (type.includes('invalid_request') || CLIENT_CODES.test(name)) return 400;
  return 500;
}

function errorObject(bodyText: string): OpenAIErrorWire | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    return undefined;
  }
  const envelope = Array.isArray(parsed) ? parsed[0] : parsed;
  const error = (asErrorObject(envelope) as { error?: unknown } | undefined)?.error;
  if (typeof error === 'string') return { message: error };
  return asErrorObject(error);
}

function textOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
