/**
 * Responses errors (the shared OpenAI reading, ../openai-errors.ts): a non-2xx body; in a stream,
 * an `error` event, whose fields are nested in `error` as the API sends them
 * (`{"type":"error","sequence_number":2,"error":{"type","code","message","param"}}`) or at the
 * event's top level as older servers and the SDK's types have them; and a `response.failed` event,
 * whose response's `error` is `{code, message}`.
 * @see https://platform.openai.com/docs/api-reference/responses-streaming/error
 */
import type { GatewayError } from '../../core/errors.ts';
import { asErrorObject, openAIReportedError, parseOpenAIError } from '../openai-errors.ts';

export const parseResponsesError = parseOpenAIError;

/** A stream's `error` event: its nested `error`, or its own fields when it has none. */
export function responsesEventError(event: object): GatewayError {
  return openAIReportedError(asErrorObject((event as { error?: unknown }).error) ?? asErrorObject(event), 'The upstream response failed.');
}

/** A failed response's `error` (a `response.failed` event, or a whole response with status `failed`). */
export function responsesFailedError(error: unknown): GatewayError {
  return openAIReportedError(asErrorObject(error), 'The upstream response failed.');
}
