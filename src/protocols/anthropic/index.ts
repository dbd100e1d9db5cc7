/** The `anthropic` upstream protocol: Anthropic Messages (PROTOCOLS.md §3). */
import { httpChatProtocol } from '../http-protocol.ts';
import type { ChatProtocol, HttpChatTranslator } from '../protocol.ts';
import { parseAnthropicError } from './errors.ts';
import { buildAnthropicRequest } from './request.ts';
import { parseAnthropicResponse } from './response.ts';
import { createAnthropicStreamDecoder } from './stream.ts';

export const anthropicTranslator: HttpChatTranslator = {
  // The messages format has no seed, penalties or logprobs, and the gateway does not run
  // Anthropic's server-side search tool (web search is a chat-completions feature served by routes
  // whose provider has it natively).
  unsupportedParameters: ['seed', 'presencePenalty', 'frequencyPenalty', 'logprobs', 'topLogprobs', 'webSearch'],
  buildRequest: buildAnthropicRequest,
  parseResponse: parseAnthropicResponse,
  createStreamDecoder: createAnthropicStreamDecoder,
  parseError: parseAnthropicError,
};

export const anthropicProtocol: ChatProtocol = httpChatProtocol(anthropicTranslator);
