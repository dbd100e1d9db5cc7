/** An Anthropic Message body → canonical result (PROTOCOLS.md §3 "Response"). */
import type { AssistantContentPart, CanonicalResult, Citation } from '../../canonical/index.ts';
import { providerIdentity } from '../provider-identity.ts';
import { malformedUpstream } from '../transport/upstream-errors.ts';
import { anthropicCitations, anthropicSignature, thinkingBlockOf, toolCallSignature, type ThinkingBlock } from './blocks.ts';
import { anthropicFinish } from './finish.ts';
import { anthropicUsage } from './usage.ts';
import type { AnthropicContentBlockWire, AnthropicMessageWire } from './wire.ts';

export function parseAnthropicResponse(body: unknown): CanonicalResult {
  const wire = body as AnthropicMessageWire | null;
  if (typeof wire !== 'object' || wire === null || !Array.isArray(wire.content)) {
    throw malformedUpstream('a message without content');
  }
  const content: AssistantContentPart[] = [];
  const citations: Citation[] = [];
  /** Thinking blocks not yet carried by a tool call (see blocks.ts). */
  let thinking: ThinkingBlock[] = [];
  for (const block of wire.content) {
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
    if (block.type === 'text') citations.push(...anthropicCitations(block.citations));
  }
  return {
    ...providerIdentity(wire.id, wire.model),
    content,
    finish: anthropicFinish(wire.stop_reason, wire.stop_sequence),
    usage: anthropicUsage(wire.usage),
    ...(citations.length > 0 && { citations }),
  };
}

/** Server-tool blocks (web search results and the like) are never requested, so never kept. */
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
