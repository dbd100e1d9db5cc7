/**
 * The `anthropic` upstream protocol: Anthropic Messages.
 * @see https://docs.anthropic.com/en/api/messages
 */
import type { HttpChatTranslator } from '../protocol.ts';
import { parseAnthropicError } from './errors.ts';
import { buildAnthropicRequest } from './request.ts';
import { parseAnthropicResponse } from './response.ts';
import { createAnthropicStreamDecoder } from './stream.ts';

export const anthropicTranslator: HttpChatTranslator = {
  // The messages format has no seed, penalties or log probabilities: routes on it reject them
  // explicitly, `logprobs: false` included (docs/chat-completions.md, rule 3). Web search is the
  // API's own server tool (web-search.ts).
  unsupportedParameters: ['seed', 'presencePenalty', 'frequencyPenalty', 'logprobs', 'topLogprobs', 'verbosity'],
  buildRequest: buildAnthropicRequest,
  parseResponse: parseAnthropicResponse,
  createStreamDecoder: createAnthropicStreamDecoder,
  parseError: parseAnthropicError,
};
