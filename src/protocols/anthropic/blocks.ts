/**
 * Anthropic content blocks ⇄ canonical parts, shared by the whole-response parser, the stream
 * decoder and the request builder. Thinking signatures and redacted thinking keep their data as an
 * Anthropic-family signature, so that a later turn sends them back unchanged (docs/protocols.md).
 *
 * The API also requires, when a tool loop continues with thinking on, the thinking blocks of the
 * turn that made the calls to be sent back unmodified ⚠. A chat client replays only its tool calls
 * (with their `extra_content`), never reasoning, so the thinking blocks that precede a turn's first
 * tool call also travel as that call's signature; when the conversation comes back without signed
 * reasoning parts, they are rebuilt from it at the start of the assistant turn.
 */
import type { AssistantContentPart, Citation, OpaqueProviderData } from '../../canonical/index.ts';
import type { AnthropicCitationWire, AnthropicRedactedThinkingBlock, AnthropicThinkingBlock } from './wire.ts';

export type ThinkingBlock = AnthropicThinkingBlock | AnthropicRedactedThinkingBlock;

export function anthropicSignature(value: string | null | undefined): OpaqueProviderData | undefined {
  return value ? { family: 'anthropic', value } : undefined;
}

/** The block a signed canonical reasoning part replays as; undefined for unsigned or foreign reasoning. */
export function thinkingBlockOf(part: AssistantContentPart): ThinkingBlock | undefined {
  if (part.type !== 'reasoning' || part.signature?.family !== 'anthropic') return undefined;
  return part.redacted === true
    ? { type: 'redacted_thinking', data: part.signature.value }
    : { type: 'thinking', thinking: part.text, signature: part.signature.value };
}

/** The signature a tool call carries for the thinking blocks before it (none when there were none). */
export function toolCallSignature(thinking: readonly ThinkingBlock[]): OpaqueProviderData | undefined {
  return thinking.length > 0 ? { family: 'anthropic', value: JSON.stringify(thinking) } : undefined;
}

/** The thinking blocks a replayed tool call carries; empty for another family's or an unreadable signature. */
export function thinkingOfToolCall(signature: OpaqueProviderData | undefined): ThinkingBlock[] {
  if (signature?.family !== 'anthropic') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(signature.value);
  } catch {
    return [];
  }
  return Array.isArray(parsed) && parsed.every(isThinkingBlock) ? parsed : [];
}

function isThinkingBlock(value: unknown): value is ThinkingBlock {
  if (typeof value !== 'object' || value === null) return false;
  const block = value as Record<string, unknown>;
  if (block.type === 'thinking') return typeof block.thinking === 'string' && typeof block.signature === 'string';
  return block.type === 'redacted_thinking' && typeof block.data === 'string';
}

/**
 * The citations of one text block spanning `[start, end)` of the answer (string indexes): one per
 * web-search source it cites, positioned on the block, since that is the text the source supports.
 * Document citations (character ranges in the client's own documents) have no URL to report.
 */
export function anthropicCitations(citations: readonly AnthropicCitationWire[] | null | undefined, start: number, end: number): Citation[] {
  const result: Citation[] = [];
  for (const citation of citations ?? []) {
    if (typeof citation.url !== 'string' || result.some((known) => known.url === citation.url)) continue;
    result.push({ url: citation.url, ...(typeof citation.title === 'string' && { title: citation.title }), startIndex: start, endIndex: end });
  }
  return result;
}
