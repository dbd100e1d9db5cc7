/**
 * The `gemini` upstream protocol: Google Gemini API generateContent.
 * @see https://ai.google.dev/api/generate-content
 */
import type { HttpChatTranslator } from '../protocol.ts';
import { parseGeminiError } from './errors.ts';
import { buildGeminiRequest } from './request.ts';
import { parseGeminiResponse } from './response.ts';
import { createGeminiStreamDecoder } from './stream.ts';

export const geminiTranslator: HttpChatTranslator = {
  // Log probabilities are not carried back to clients from this format, and the API has no
  // end-user identifier field: accepting either would drop it silently.
  unsupportedParameters: ['logprobs', 'topLogprobs', 'user', 'verbosity', 'outputEffort', 'toolInputExamples'],
  buildRequest: buildGeminiRequest,
  parseResponse: parseGeminiResponse,
  createStreamDecoder: createGeminiStreamDecoder,
  parseError: parseGeminiError,
};
