/**
 * Responses errors: a non-2xx body `{"error":{"message","type","param","code"}}`
 * (as in Chat), a stream `error` event `{type:"error",code,message,param}`, or a `failed` response
 * whose `error` is `{code,message}`.
 * @see https://platform.openai.com/docs/api-reference/responses
 */
import type { GatewayError } from '../../core/errors.ts';
import { upstreamReportedError, upstreamStatusError, type UpstreamHeaders } from '../transport/upstream-errors.ts';
import type { ResponsesErrorWire } from './wire.ts';

export function parseResponsesError(status: number, headers: UpstreamHeaders, bodyText: string): GatewayError {
  let error: ResponsesErrorWire | undefined;
  try {
    error = (JSON.parse(bodyText) as { error?: ResponsesErrorWire } | null)?.error ?? undefined;
  } catch {
    error = undefined;
  }
  const message = error?.message ?? (bodyText.trim() === '' ? undefined : bodyText.trim().slice(0, 200));
  return upstreamStatusError({ status, headers, message, param: error?.param });
}

/** A failure reported inside a 200: the stream's `error` event or a `failed` response. */
export function responsesReportedError(error: ResponsesErrorWire | null | undefined): GatewayError {
  const kind = `${error?.type ?? ''} ${error?.code ?? ''}`;
  const status = kind.includes('rate_limit') ? 429 : kind.includes('invalid') ? 400 : 500;
  return upstreamReportedError(status, error?.message ?? 'The upstream response failed.');
}
