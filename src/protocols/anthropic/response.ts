/**
 * An Anthropic Message body → canonical result.
 * @see https://docs.anthropic.com/en/api/messages
 */
import { checkedBody, wireCheck } from '../wire-schema.ts';
import type { AssistantContentPart, CanonicalResult, Citation } from '../../canonical/index.ts';
import { providerIdentity } from '../provider-identity.ts';
import { errors } from '../../core/errors.ts';
import { anthropicCitations, anthropicSignature, thinkingBlockOf, toolCallSignature, type ThinkingBlock } from './blocks.ts';
import { anthropicFinish } from './finish.ts';
import { anthropicUsage } from './usage.ts';
import { WebSearchTally } from './web-search.ts';
import { AnthropicMessageSchema, type AnthropicContentBlockWire } from './wire.ts';

const checkMessage = wireCheck(AnthropicMessageSchema, 'a message');

export function parseAnthropicResponse(body: unknown): CanonicalResult {
  const wire = checkedBody(checkMessage, body);
  if (!Array.isArray(wire.content)) {
    throw errors.malformedUpstream('a message without content');
  }
  const content: AssistantContentPart[] = [];
  const citations: Citation[] = [];
  const searches = new WebSearchTally();
  /** Thinking blocks not yet carried by a tool call (see blocks.ts). */
  let thinking: ThinkingBlock[] = [];
  /** Length of the answer text so far: citations are positions in it. */
  let answerLength = 0;
  for (const block of wire.content) {
    searches.block(block);
    const part = contentPart(block);
    if (part === undefined) continue;
    const replay = thinkingBlockOf(part);
    if (replay !== undefined) thinking.push(replay);
    if (part.type === 'tool_call') {
      const signature = toolCallSignature(thinking);
      content.push(signature ? { ...part, signature } : part);
      thinking = [];
    } else {
      content.push(part);
    }
    if (part.type === 'text') {
      citations.push(...anthropicCitations(block.citations, answerLength, answerLength + part.text.length));
      answerLength += part.text.length;
    }
  }
  searches.usage(wire.usage);
  const webSearch = searches.info();
  return {
    ...providerIdentity(wire.id, wire.model),
    content,
    finish: anthropicFinish(wire),
    usage: anthropicUsage(wire.usage),
    ...(wire.usage != null && { providerUsage: wire.usage }),
    ...(webSearch && { webSearch }),
    ...(citations.length > 0 && { citations }),
  };
}

/** Server-tool blocks are not content: web search is reported apart (web-search.ts). */
function contentPart(block: AnthropicContentBlockWire): AssistantContentPart | undefined {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text ?? '' };
    case 'thinking': {
      const signature = anthropicSignature(block.signature);
      return { type: 'reasoning', text: block.thinking ?? '', ...(signature && { signature }) };
    }
    case 'redacted_thinking': {
      const signature = anthropicSignature(block.data);
      return { type: 'reasoning', text: '', redacted: true, ...(signature && { signature }) };
    }
    case 'tool_use':
      return { type: 'tool_call', id: block.id ?? '', name: block.name ?? '', arguments: JSON.stringify(block.input ?? {}) };
    default:
      return undefined;
  }
}
