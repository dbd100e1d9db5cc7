/**
 * Chat Completions errors: `{"error":{"message","type","param","code"}}` as the body
 * of a non-2xx answer, or as a `data:` chunk mid-stream. Google's compatible endpoint wraps the
 * object in an array; both shapes are read.
 * @see https://platform.openai.com/docs/guides/error-codes
 */
import type { GatewayError } from '../../core/errors.ts';
import { upstreamReportedError, upstreamStatusError, type UpstreamHeaders } from '../transport/upstream-errors.ts';
import type { ChatErrorWire } from './wire.ts';

export function parseChatError(status: number, headers: UpstreamHeaders, bodyText: string): GatewayError {
  const error = errorObject(bodyText);
  return upstreamStatusError({ status, headers, message: error?.message ?? excerpt(bodyText), param: error?.param });
}

/** A mid-stream `{"error":…}` chunk: the status is implied by the error's type or code. */
export function chatStreamError(error: ChatErrorWire): GatewayError {
  return upstreamReportedError(impliedStatus(error), error.message);
}

function impliedStatus(error: ChatErrorWire): number {
  if (typeof error.code === 'number' && error.code >= 400 && error.code <= 599) return error.code;
  const kind = `${error.type ?? ''} ${error.code ?? ''}`;
  if (kind.includes('rate_limit')) return 429;
  if (kind.includes('invalid_request')) return 400;
  return 500;
}

function errorObject(bodyText: string): ChatErrorWire | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    return undefined;
  }
  const envelope = Array.isArray(parsed) ? parsed[0] : parsed;
  const error = (envelope as { error?: unknown } | null)?.error;
  if (typeof error === 'string') return { message: error };
  return typeof error === 'object' && error !== null ? (error as ChatErrorWire) : undefined;
}

/** A short piece of a non-JSON error body (an HTML error page from a proxy, say). */
function excerpt(text: string): string | undefined {
  const trimmed = text.trim();
  return trimmed === '' ? undefined : trimmed.slice(0, 200);
}
