/**
 * Canonical conversation → Anthropic `system` and `messages` (docs/protocols.md).
 *
 * - System and developer instructions are hoisted into the top-level `system` blocks, in order.
 * - The API has only user and assistant turns: tool results ride in a user turn, and consecutive
 *   turns of the same side are merged (several Chat `tool` messages and the user text after them
 *   become one user turn). Within a user turn the `tool_result` blocks come first, as the API
 *   requires them to directly answer the preceding `tool_use` blocks.
 * - Reasoning is replayed only when it carries an Anthropic signature (a thinking block, or the
 *   data of a redacted one), unchanged; reasoning from any other family is dropped, because the API
 *   rejects thinking blocks it did not sign. A turn replayed without signed reasoning (a chat
 *   client's) starts with the thinking blocks its tool calls carry (see blocks.ts).
 */
import type { AssistantContentPart, CacheControl, CanonicalRequest, DocumentPart, ImagePart, ToolResultPart, UserContentPart } from '../../canonical/index.ts';
import { toolArgumentsObject } from '../tool-arguments.ts';
import { thinkingBlockOf, thinkingOfToolCall } from './blocks.ts';
import type {
  AnthropicAssistantBlock,
  AnthropicCacheControl,
  AnthropicDocumentBlock,
  AnthropicImageBlock,
  AnthropicMessage,
  AnthropicTextBlock,
  AnthropicToolResultBlock,
  AnthropicUserBlock,
} from './wire.ts';

export function anthropicSystem(request: CanonicalRequest): AnthropicTextBlock[] {
  return request.system.map((block) => ({ type: 'text', text: block.text, ...cacheControl(block.cacheControl) }));
}

export function anthropicMessages(request: CanonicalRequest): AnthropicMessage[] {
  const messages: AnthropicMessage[] = [];
  const append = (turn: AnthropicMessage) => {
    if (turn.content.length === 0) return;
    const last = messages.at(-1);
    if (last?.role === 'user' && turn.role === 'user') last.content.push(...turn.content);
    else if (last?.role === 'assistant' && turn.role === 'assistant') last.content.push(...turn.content);
    else messages.push(turn);
  };
  for (const message of request.messages) {
    switch (message.role) {
      case 'user':
        append({ role: 'user', content: message.content.map(userBlock) });
        break;
      case 'tool':
        append({ role: 'user', content: message.content.map(toolResultBlock) });
        break;
      case 'assistant':
        append({ role: 'assistant', content: assistantBlocks(message.content) });
        break;
      default: {
        const unknown: never = message;
        throw new Error(`unknown role ${JSON.stringify(unknown)}`);
      }
    }
  }
  for (const message of messages) {
    if (message.role === 'user') message.content = toolResultsFirst(message.content);
  }
  return messages;
}

function userBlock(part: UserContentPart): AnthropicUserBlock {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text, ...cacheControl(part.cacheControl) };
    case 'image':
      return imageBlock(part);
    case 'document':
      return documentBlock(part);
    case 'tool_result':
      return toolResultBlock(part);
    default: {
      const unknown: never = part;
      throw new Error(`unknown user part ${JSON.stringify(unknown)}`);
    }
  }
}

function imageBlock(part: ImagePart): AnthropicImageBlock {
  const source = part.source;
  return {
    type: 'image',
    source: source.kind === 'url' ? { type: 'url', url: source.url } : { type: 'base64', media_type: source.mediaType, data: source.data },
    ...cacheControl(part.cacheControl),
  };
}

/** Plain-text documents travel as text (canonical `data` is the text itself), others as base64. */
function documentBlock(part: DocumentPart): AnthropicDocumentBlock {
  return {
    type: 'document',
    source:
      part.mediaType === 'text/plain'
        ? { type: 'text', media_type: 'text/plain', data: part.data }
        : { type: 'base64', media_type: part.mediaType, data: part.data },
    ...(part.title !== undefined && { title: part.title }),
    ...cacheControl(part.cacheControl),
  };
}

function toolResultBlock(part: ToolResultPart): AnthropicToolResultBlock {
  const content = part.content.map((item) => (item.type === 'text' ? { type: 'text' as const, text: item.text } : imageBlock(item)));
  return {
    type: 'tool_result',
    tool_use_id: part.toolCallId,
    ...(content.length > 0 && { content }),
    ...(part.isError === true && { is_error: true }),
    ...cacheControl(part.cacheControl),
  };
}

function assistantBlocks(content: readonly AssistantContentPart[]): AnthropicAssistantBlock[] {
  const replayed = content.some((part) => thinkingBlockOf(part) !== undefined);
  const carried = replayed ? [] : content.flatMap((part) => (part.type === 'tool_call' ? thinkingOfToolCall(part.signature) : []));
  return [...carried, ...content.flatMap((part) => assistantBlock(part))];
}

function assistantBlock(part: AssistantContentPart): AnthropicAssistantBlock[] {
  switch (part.type) {
    case 'text':
      // The API rejects empty text blocks; an empty text carries nothing to replay. A breakpoint
      // on an assistant block stays where the client put it, as on every other block.
      return part.text === '' ? [] : [{ type: 'text', text: part.text, ...cacheControl(part.cacheControl) }];
    case 'tool_call':
      return [{ type: 'tool_use', id: part.id, name: part.name, input: toolArgumentsObject(part) }];
    case 'reasoning': {
      const block = thinkingBlockOf(part);
      return block === undefined ? [] : [block];
    }
    default: {
      const unknown: never = part;
      throw new Error(`unknown assistant part ${JSON.stringify(unknown)}`);
    }
  }
}

/** A stable reordering: tool results first, everything else after them in its original order. */
function toolResultsFirst(blocks: AnthropicUserBlock[]): AnthropicUserBlock[] {
  return [...blocks.filter((block) => block.type === 'tool_result'), ...blocks.filter((block) => block.type !== 'tool_result')];
}

function cacheControl(control: CacheControl | undefined): { cache_control?: AnthropicCacheControl } {
  if (control === undefined) return {};
  return { cache_control: { type: 'ephemeral', ...(control.ttl !== undefined && { ttl: control.ttl }) } };
}
