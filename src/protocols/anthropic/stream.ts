/**
 * Anthropic Messages SSE → canonical stream events (docs/protocols.md, "Streaming").
 *
 * The wire already has explicit blocks, so each block becomes one canonical part: its
 * `content_block_start` opens the part, deltas feed it, `content_block_stop` closes it. Canonical
 * indexes are assigned in arrival order, skipping block types the gateway does not use. Usage is
 * cumulative (`message_start`, then each `message_delta`); the finish is taken from
 * `message_delta` and emitted at `message_stop`, the stream's terminator. As in the official SDK,
 * `ping` and events before `message_start` are ignored. The thinking blocks before a tool call
 * travel as that call's signature, as in a whole response (see blocks.ts).
 *
 * Web search blocks feed no part: a `server_tool_use` block's query arrives as input_json_delta
 * fragments, its `web_search_tool_result` arrives whole in its content_block_start. A `web-search`
 * event follows each search that ran, so that a stream cut short still reports what was searched,
 * and the `message_delta` whose usage carries the billed count gives the final one (web-search.ts).
 * @see https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */
import type { Finish, StreamEvent } from '../../canonical/index.ts';
import { errors, type GatewayError } from '../../core/errors.ts';
import type { StreamDecoder, StreamDecoderOptions } from '../protocol.ts';
import { providerIdentity } from '../provider-identity.ts';
import { parseEventJson } from '../transport/sse.ts';
import { anthropicCitations, anthropicSignature, toolCallSignature, type ThinkingBlock } from './blocks.ts';
import { anthropicStreamError } from './errors.ts';
import { anthropicFinish } from './finish.ts';
import { anthropicUsage, mergeAnthropicUsage } from './usage.ts';
import { WebSearchTally } from './web-search.ts';
import {
  AnthropicEventSchema,
  type AnthropicCitationWire,
  type AnthropicContentBlockWire,
  type AnthropicDeltaWire,
  type AnthropicEventWire,
  type AnthropicUsageWire,
} from './wire.ts';
import { wireCheck } from '../wire-schema.ts';
import { learnDeltaTemplate, type DeltaTemplate } from '../delta-template.ts';

const checkEvent = wireCheck(AnthropicEventSchema, 'a message stream event');

type OpenBlock =
  /** `start`: where the block begins in the answer text, which its citations span. */
  | { readonly kind: 'text'; readonly index: number; readonly start: number; readonly citations: AnthropicCitationWire[] }
  | { readonly kind: 'reasoning'; readonly index: number; readonly redacted: boolean; text: string; signature?: string }
  | { readonly kind: 'tool_call'; readonly index: number; hasArguments: boolean }
  /** A server tool call: not a canonical part, its input is collected for web-search.ts. */
  | { readonly kind: 'server_tool'; readonly id?: string; readonly name?: string; input: string };

/** `templates: false` decodes every event in full (tests hold the two ways to the same events). */
export function createAnthropicStreamDecoder(options: StreamDecoderOptions = {}): StreamDecoder {
  const templates = options.templates !== false;
  let started = false;
  let finished = false;
  let nextIndex = 0;
  /** Wire block index → the canonical part it feeds; unknown block types are absent. */
  const blocks = new Map<number, OpenBlock>();
  let usage: AnthropicUsageWire = {};
  /** The usage as the provider reported it: message_start's, each message_delta's fields laid over it (placeholder included). */
  let reported: AnthropicUsageWire = {};
  let pendingFinish: Finish | undefined;
  /** Completed thinking blocks not yet carried by a tool call (see blocks.ts). */
  let thinking: ThinkingBlock[] = [];
  /** Length of the answer text so far: citations are positions in it. */
  let answerLength = 0;
  const searches = new WebSearchTally();
  /** The wrapping of the open text block's deltas, once one was decoded in full (../delta-template.ts), and that block. */
  let textDelta: { readonly template: DeltaTemplate; readonly block: OpenBlock & { kind: 'text' }; readonly wireIndex: number } | undefined;

  const webSearchEvents = (): StreamEvent[] => {
    const webSearch = searches.info();
    return webSearch === undefined ? [] : [{ type: 'web-search', webSearch }];
  };

  const fail = (error: GatewayError): StreamEvent[] => {
    finished = true;
    return [{ type: 'error', error }];
  };

  const startBlock = (wireIndex: number, block: AnthropicContentBlockWire): StreamEvent[] => {
    switch (block.type) {
      case 'text': {
        const index = nextIndex++;
        blocks.set(wireIndex, { kind: 'text', index, start: answerLength, citations: [...(block.citations ?? [])] });
        answerLength += block.text?.length ?? 0;
        return [{ type: 'text-start', index }, ...(block.text ? [{ type: 'text-delta' as const, index, text: block.text }] : [])];
      }
      case 'thinking': {
        const index = nextIndex++;
        blocks.set(wireIndex, {
          kind: 'reasoning',
          index,
          redacted: false,
          text: block.thinking ?? '',
          ...(block.signature ? { signature: block.signature } : {}),
        });
        return [{ type: 'reasoning-start', index }, ...(block.thinking ? [{ type: 'reasoning-delta' as const, index, text: block.thinking }] : [])];
      }
      case 'redacted_thinking': {
        const index = nextIndex++;
        blocks.set(wireIndex, { kind: 'reasoning', index, redacted: true, text: '', ...(block.data ? { signature: block.data } : {}) });
        return [{ type: 'reasoning-start', index, redacted: true }];
      }
      case 'tool_use': {
        const index = nextIndex++;
        const input = wholeInput(block.input);
        blocks.set(wireIndex, { kind: 'tool_call', index, hasArguments: input !== undefined });
        const signature = toolCallSignature(thinking);
        thinking = [];
        return [
          { type: 'tool-call-start', index, id: block.id ?? '', name: block.name ?? '', ...(signature && { signature }) },
          ...(input !== undefined ? [{ type: 'tool-call-delta' as const, index, argumentsDelta: input }] : []),
        ];
      }
      case 'server_tool_use':
        blocks.set(wireIndex, { kind: 'server_tool', id: block.id ?? undefined, name: block.name ?? undefined, input: wholeInput(block.input) ?? '' });
        return [];
      case 'web_search_tool_result':
        return searches.block(block) ? webSearchEvents() : [];
      default:
        return [];
    }
  };

  const blockDelta = (block: OpenBlock, delta: AnthropicDeltaWire): StreamEvent[] => {
    switch (delta.type) {
      case 'text_delta':
        if (block.kind !== 'text' || !delta.text) return [];
        answerLength += delta.text.length;
        return [{ type: 'text-delta', index: block.index, text: delta.text }];
      case 'citations_delta':
        if (block.kind === 'text' && delta.citation) block.citations.push(delta.citation);
        return [];
      case 'thinking_delta':
        if (block.kind !== 'reasoning' || !delta.thinking) return [];
        block.text += delta.thinking;
        return [{ type: 'reasoning-delta', index: block.index, text: delta.thinking }];
      case 'signature_delta':
        if (block.kind === 'reasoning' && delta.signature) block.signature = (block.signature ?? '') + delta.signature;
        return [];
      case 'input_json_delta':
        if (!delta.partial_json) return [];
        if (block.kind === 'server_tool') {
          block.input += delta.partial_json;
          return [];
        }
        if (block.kind !== 'tool_call') return [];
        block.hasArguments = true;
        return [{ type: 'tool-call-delta', index: block.index, argumentsDelta: delta.partial_json }];
      default:
        return [];
    }
  };

  const stopBlock = (block: OpenBlock): StreamEvent[] => {
    switch (block.kind) {
      case 'text': {
        const citations = anthropicCitations(block.citations, block.start, answerLength);
        return [{ type: 'text-end', index: block.index, ...(citations.length > 0 && { citations }) }];
      }
      case 'reasoning': {
        const signature = anthropicSignature(block.signature);
        if (signature !== undefined) {
          thinking.push(
            block.redacted ? { type: 'redacted_thinking', data: signature.value } : { type: 'thinking', thinking: block.text, signature: signature.value },
          );
        }
        return [{ type: 'reasoning-end', index: block.index, ...(signature && { signature }) }];
      }
      case 'tool_call':
        // A call without arguments streams no fragment at all; canonically its arguments are `{}`,
        // as in the non-streaming answer.
        return [
          ...(block.hasArguments ? [] : [{ type: 'tool-call-delta' as const, index: block.index, argumentsDelta: '{}' }]),
          { type: 'tool-call-end', index: block.index },
        ];
      case 'server_tool':
        searches.block({ type: 'server_tool_use', id: block.id, name: block.name, input: parsedInput(block.input) });
        return [];
      default: {
        const unknown: never = block;
        throw new Error(`unknown block ${JSON.stringify(unknown)}`);
      }
    }
  };

  const onEvent = (event: AnthropicEventWire): StreamEvent[] => {
    switch (event.type) {
      case 'message_start': {
        if (started) return fail(errors.malformedUpstream('a second message_start in one stream'));
        started = true;
        const message = event.message ?? {};
        // The output count of message_start is a placeholder (1, or a running count) for a message
        // with no content yet: none of it was delivered, so output is counted from message_delta alone.
        reported = { ...message.usage };
        usage = { ...mergeAnthropicUsage({}, message.usage), output_tokens: 0, output_tokens_details: undefined };
        return [
          { type: 'start', ...providerIdentity(message.id, message.model) },
          { type: 'usage', usage: anthropicUsage(usage), reported },
        ];
      }
      case 'content_block_start':
        return event.content_block ? startBlock(event.index ?? 0, event.content_block) : [];
      case 'content_block_delta': {
        const block = blocks.get(event.index ?? 0);
        return block && event.delta ? blockDelta(block, event.delta) : [];
      }
      case 'content_block_stop': {
        const block = blocks.get(event.index ?? 0);
        if (block === undefined) return [];
        blocks.delete(event.index ?? 0);
        return stopBlock(block);
      }
      case 'message_delta':
        pendingFinish = anthropicFinish(event.delta ?? undefined);
        usage = mergeAnthropicUsage(usage, event.usage);
        reported = { ...reported, ...event.usage };
        searches.usage(event.usage);
        return [{ type: 'usage', usage: anthropicUsage(usage), reported }, ...webSearchEvents()];
      case 'message_stop': {
        if (pendingFinish === undefined) return fail(errors.malformedUpstream('a message_stop without a stop_reason'));
        const events = [...blocks.values()].flatMap(stopBlock);
        blocks.clear();
        finished = true;
        return [...events, { type: 'finish', finish: pendingFinish }];
      }
      default:
        // `ping`, and event types newer than this code.
        return [];
    }
  };

  return {
    push(message) {
      if (finished) return [];
      // A text delta like the last one of the same open block but for its text.
      if (textDelta !== undefined && blocks.get(textDelta.wireIndex) === textDelta.block) {
        const text = textDelta.template(message.data, message.event);
        if (text === '') return [];
        if (text !== undefined) {
          answerLength += text.length;
          return [{ type: 'text-delta', index: textDelta.block.index, text }];
        }
      }
      const parsed = parseEventJson(message.data);
      if (!parsed.ok) return fail(parsed.error);
      const type = message.event ?? (parsed.value as { type?: unknown } | null)?.type;
      // An error event is read as it comes, whatever its shape (errors.ts trusts none of its fields).
      if (type === 'error') return fail(anthropicStreamError((parsed.value as { error?: unknown } | null)?.error));
      const checked = checkEvent(parsed.value);
      if (!checked.ok) return fail(checked.error);
      const event = checked.value;
      if (typeof type !== 'string') return [];
      if (!started && type !== 'message_start') return [];
      const events = onEvent({ ...event, type });
      if (templates && type === 'content_block_delta' && events.length === 1 && events[0].type === 'text-delta' && event.delta?.type === 'text_delta') {
        const wireIndex = event.index ?? 0;
        const block = blocks.get(wireIndex);
        const template = learnDeltaTemplate(message.data, events[0].text, textOf, message.event);
        textDelta = template && block?.kind === 'text' ? { template, block, wireIndex } : undefined;
      }
      return events;
    },
    end() {
      return finished ? [] : fail(errors.malformedUpstream('a stream that ended before message_stop'));
    },
  };
}

/** A block's input at its start: `{}` means the input follows in input_json_delta fragments; any other is whole. */
function wholeInput(input: unknown): string | undefined {
  const text = input === undefined ? undefined : JSON.stringify(input);
  return text === '{}' ? undefined : text;
}

/** The assembled input of a server tool call; one that does not parse reports no query. */
function parsedInput(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Where a text delta's text is. */
const textOf = (parsed: unknown): unknown => (parsed as { delta?: { text?: unknown } } | null)?.delta?.text;
