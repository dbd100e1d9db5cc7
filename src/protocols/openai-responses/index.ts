/** The `openai-responses` upstream protocol: OpenAI's Responses API (`POST {base_url}/responses`). */
import type { HttpChatTranslator } from '../protocol.ts';
import { parseResponsesError } from './errors.ts';
import { buildResponsesRequest } from './request.ts';
import { parseResponsesResponse } from './response.ts';
import { createResponsesStreamDecoder } from './stream.ts';

export const openAIResponsesTranslator: HttpChatTranslator = {
  // The Responses format has no stop sequences, seed, penalties or chat-style logprobs, and no
  // top_k; routes on it reject them explicitly, `logprobs: false` included (docs/chat-completions.md,
  // rule 3).
  unsupportedParameters: ['stop', 'seed', 'presencePenalty', 'frequencyPenalty', 'logprobs', 'topLogprobs', 'topK', 'outputEffort', 'toolInputExamples'],
  buildRequest: buildResponsesRequest,
  parseResponse: parseResponsesResponse,
  createStreamDecoder: createResponsesStreamDecoder,
  parseError: parseResponsesError,
};
