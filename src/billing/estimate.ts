/**
 * Pre-flight prompt size: what a request is likely to cost in input tokens before any provider has
 * counted it. Used for the credit quote, the context-window check and free token counting. It is
 * an estimate (providers tokenize differently); bills always come from the usage a provider reports.
 */
import type { CanonicalRequest, ContentPart, Message } from '../canonical/index.ts';
import { countTextTokens } from './tokenizer.ts';

/**
 * Fixed per-image estimate: the upper end of what current providers charge for one image at full
 * detail (about 1,600 tokens for Anthropic's largest downscaled image, ~1,100 for OpenAI's
 * high-detail tiling). Images are not decoded to measure them.
 */
export const IMAGE_TOKEN_ESTIMATE = 1600;

/** Fixed per-document estimate for binary documents (a few PDF pages); plain text is tokenized. */
export const DOCUMENT_TOKEN_ESTIMATE = 3000;

/** Framing overhead per message (role markers), as in OpenAI's published counting recipe. */
const MESSAGE_OVERHEAD_TOKENS = 3;
/** Every reply is primed with an assistant header. */
const REPLY_PRIMING_TOKENS = 3;

export function estimatePromptTokens(request: CanonicalRequest): number {
  let tokens = REPLY_PRIMING_TOKENS;
  for (const block of request.system) tokens += MESSAGE_OVERHEAD_TOKENS + countTextTokens(block.text);
  tokens += estimateMessagesTokens(request.messages);
  for (const tool of request.tools ?? []) {
    tokens += countTextTokens(tool.name) + countTextTokens(tool.description ?? '');
    if (tool.parameters) tokens += countTextTokens(JSON.stringify(tool.parameters));
  }
  if (request.responseFormat?.kind === 'json_schema') tokens += countTextTokens(JSON.stringify(request.responseFormat.schema));
  return tokens;
}

export function estimateMessagesTokens(messages: readonly Message[]): number {
  let tokens = 0;
  for (const message of messages) {
    tokens += MESSAGE_OVERHEAD_TOKENS;
    for (const part of message.content) tokens += estimatePartTokens(part);
  }
  return tokens;
}

function estimatePartTokens(part: ContentPart): number {
  switch (part.type) {
    case 'text':
      return countTextTokens(part.text);
    case 'image':
      return IMAGE_TOKEN_ESTIMATE;
    case 'document':
      return part.mediaType === 'text/plain' ? countTextTokens(part.data) : DOCUMENT_TOKEN_ESTIMATE;
    case 'tool_call':
      return countTextTokens(part.name) + countTextTokens(part.arguments);
    case 'tool_result': {
      let tokens = 0;
      for (const inner of part.content) tokens += estimatePartTokens(inner);
      return tokens;
    }
    case 'reasoning':
      return countTextTokens(part.text);
    default: {
      const unreachable: never = part;
      return unreachable;
    }
  }
}
