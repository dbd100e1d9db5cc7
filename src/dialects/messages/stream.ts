/**
 * Canonical stream events → the Messages API's server-sent events, in the order the official
 * Anthropic SDK's `messages.stream()` helpers accumulate (docs/messages.md, "Streaming"):
 * `message_start` with the message shell, then per content part `content_block_start`, its
 * deltas (`text_delta`, `thinking_delta`, `signature_delta`, `input_json_delta`) and
 * `content_block_stop`, then `message_delta` (stop reason, final usage with the charged `cost`) and
 * `message_stop`. An error after the stream started is one `error` event and the stream ends
 * there. A `ping` fills every silence before it lasts {@link PING_INTERVAL_MS}.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */
import type { FastifyReply } from 'fastify';
import { ZERO_USAGE, type StreamEvent, type Usage } from '../../canonical/index.ts';
import { KeepAlive, sendEventStream } from '../../http/event-stream.ts';
import type { StreamRun } from '../../pipeline/text-stream.ts';
import { chargedUsage, encodeStop, encodeUsage, messageId, type MessagesContentBlock } from './encode.ts';
import { messagesErrorBody } from './error-body.ts';
import { signatureText, toolCallDataText } from './opaque-data.ts';

/** The longest silence before a `ping`: below the idle timeouts of common proxies (30 s and up). */
const PING_INTERVAL_MS = 15_000;
export const PING_FRAME = frame('ping', { type: 'ping' });
const PING = new KeepAlive(PING_INTERVAL_MS, PING_FRAME);
const MESSAGE_STOP_FRAME = frame('message_stop', { type: 'message_stop' });

export function sendMessagesStream(reply: FastifyReply, run: StreamRun): Promise<void> {
  return sendEventStream(reply, run.events, messagesFrameEncoder(run), PING);
}

type BlockKind = 'text' | 'thinking' | 'tool_use';

interface OpenBlock {
  /** The block's position in the message's content, which the SDK indexes its snapshot with. */
  readonly index: number;
  readonly kind: BlockKind;
}

/**
 * The frames of each canonical event, in order, with the stream's state in the closure (see the
 * chat dialect's stream.ts). Blocks are numbered in the order they start; canonical parts that
 * overlap in time (parallel tool calls from an OpenAI-format upstream) stay separate blocks with
 * their own indexes, which the SDK accumulates independently.
 */
export function messagesFrameEncoder(run: StreamRun): (event: StreamEvent) => string {
  const { call } = run;
  /** Canonical part index → its open block; a part's block is removed when it stops. */
  const open = new Map<number, OpenBlock>();
  let nextIndex = 0;
  let started = false;
  let usage: Usage = ZERO_USAGE;

  /**
   * `message_start` waits for the first event after the canonical `start`: an Anthropic upstream's
   * input usage arrives right behind it and belongs in the shell, as the API sends it.
   */
  const messageStart = (): string => {
    if (started) return '';
    started = true;
    const message = {
      id: messageId(call.requestId),
      type: 'message',
      role: 'assistant',
      model: call.modelId,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      usage: encodeUsage(usage),
    };
    return frame('message_start', { type: 'message_start', message });
  };

  const startBlock = (part: number, kind: BlockKind, block: MessagesContentBlock): string => {
    const index = nextIndex++;
    open.set(part, { index, kind });
    return frame('content_block_start', { type: 'content_block_start', index, content_block: block });
  };

  const stopBlock = (part: number): string => {
    const block = open.get(part);
    if (block === undefined) return '';
    open.delete(part);
    return blockStop(block.index);
  };

  /** A block sent whole, start and stop together: its content is known at once. */
  const wholeBlock = (block: MessagesContentBlock): string => {
    const index = nextIndex++;
    return frame('content_block_start', { type: 'content_block_start', index, content_block: block }) + blockStop(index);
  };

  /**
   * Every delta is one string field of its type, and a stream is mostly deltas: their frames are
   * written around that string's JSON (the same bytes as `frame` would give, key order included).
   */
  const delta = (index: number, type: DeltaType, text: string): string => `${DELTA_HEAD}${index}${DELTA_BODY[type]}${JSON.stringify(text)}}}\n\n`;

  /** The block a text or thinking delta feeds, opened if its start was not seen. */
  const blockFor = (part: number, kind: 'text' | 'thinking'): { frames: string; index: number } => {
    const known = open.get(part);
    if (known !== undefined) return { frames: '', index: known.index };
    const frames = startBlock(part, kind, kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' });
    return { frames, index: nextIndex - 1 };
  };

  /** Redacted reasoning has no text: its block is sent whole when its data (the signature) is known. */
  const redacted = new Set<number>();

  return (event) => {
    switch (event.type) {
      case 'start':
        return '';
      case 'usage':
        usage = event.usage;
        return messageStart();
      case 'text-start':
        return messageStart() + startBlock(event.index, 'text', { type: 'text', text: '' });
      case 'text-delta': {
        if (!event.text) return messageStart();
        const block = blockFor(event.index, 'text');
        return messageStart() + block.frames + delta(block.index, 'text_delta', event.text);
      }
      case 'reasoning-start':
        if (event.redacted === true) {
          redacted.add(event.index);
          return messageStart();
        }
        return messageStart() + startBlock(event.index, 'thinking', { type: 'thinking', thinking: '', signature: '' });
      case 'reasoning-delta': {
        if (!event.text || redacted.has(event.index)) return messageStart();
        const block = blockFor(event.index, 'thinking');
        return messageStart() + block.frames + delta(block.index, 'thinking_delta', event.text);
      }
      case 'reasoning-end': {
        const signature = signatureText(event.signature);
        if (redacted.delete(event.index)) {
          return messageStart() + wholeBlock({ type: 'redacted_thinking', data: signature });
        }
        const block = open.get(event.index);
        const signed = block !== undefined && signature !== '' ? delta(block.index, 'signature_delta', signature) : '';
        return signed + stopBlock(event.index);
      }
      case 'tool-call-start': {
        // Data the tool_use block has no field for goes first, in its own block (opaque-data.ts).
        const carried = toolCallDataText(event);
        const carrier = carried === undefined ? '' : wholeBlock({ type: 'redacted_thinking', data: carried });
        return messageStart() + carrier + startBlock(event.index, 'tool_use', { type: 'tool_use', id: event.id, name: event.name, input: {} });
      }
      case 'tool-call-delta': {
        const block = open.get(event.index);
        return block?.kind === 'tool_use' && event.argumentsDelta ? delta(block.index, 'input_json_delta', event.argumentsDelta) : '';
      }
      case 'text-end':
      case 'tool-call-end':
        return stopBlock(event.index);
      case 'finish': {
        // The pipeline settles before it hands out the terminal event, so the charge is known here;
        // without it (the ledger was unreachable) the usage goes out without a cost.
        const settlement = run.settlement;
        let frames = messageStart();
        for (const part of [...open.keys()]) frames += stopBlock(part);
        const messageDelta = {
          type: 'message_delta',
          delta: encodeStop(event.finish),
          usage: settlement ? chargedUsage(settlement) : encodeUsage(usage),
        };
        return `${frames}${frame('message_delta', messageDelta)}${MESSAGE_STOP_FRAME}`;
      }
      case 'error':
        return frame('error', messagesErrorBody(event.error));
      case 'web-search':
        // Web search is not offered on this endpoint (docs/messages.md).
        return '';
      default: {
        const unreachable: never = event;
        return unreachable;
      }
    }
  };
}

const DELTA_HEAD = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":';
/** Each delta type's JSON between the index and the text: its type, then the one field that carries the text. */
const DELTA_BODY = {
  text_delta: ',"delta":{"type":"text_delta","text":',
  thinking_delta: ',"delta":{"type":"thinking_delta","thinking":',
  signature_delta: ',"delta":{"type":"signature_delta","signature":',
  input_json_delta: ',"delta":{"type":"input_json_delta","partial_json":',
} as const;
type DeltaType = keyof typeof DELTA_BODY;

/** The same bytes as `frame` for a content_block_stop: the stop of every block of every stream. */
function blockStop(index: number): string {
  return `event: content_block_stop\ndata: {"type":"content_block_stop","index":${index}}\n\n`;
}

function frame(event: string, payload: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`;
}
