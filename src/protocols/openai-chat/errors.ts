/**
 * Chat Completions errors (the shared OpenAI reading, ../openai-errors.ts): a non-2xx body, or a
 * `data:` chunk `{"error":{…}}` mid-stream.
 * @see https://platform.openai.com/docs/guides/error-codes
 */
import type { GatewayError } from '../../core/errors.ts';
import { asErrorObject, openAIReportedError, parseOpenAIError } from '../openai-errors.ts';

export const parseChatError = parseOpenAIError;

/** A mid-stream `{"error":…}` chunk (or an error in a 200 body); some servers send the error as a bare string. */
export function chatStreamError(error: unknown): GatewayError {
  return openAIReportedError(typeof error === 'string' ? { message: error } : asErrorObject(error), 'The upstream stream failed.');
}
