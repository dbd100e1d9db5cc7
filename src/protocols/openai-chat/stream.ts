/**
 * Chat Completions SSE → canonical stream events (docs/protocols.md, "Streaming").
 *
 * The wire has no explicit part boundaries, so the decoder opens a canonical part when the first
 * delta of its kind arrives and closes it when another kind starts or the choice finishes. Tool calls
 * are tracked by their wire `index`. The finish is held back until the usage chunk and `[DONE]` have
 * been seen, because the canonical stream ends with exactly one finish.
 * @see https://platform.openai.com/docs/api-reference/chat-streaming
 */
import type { Citation, ContentLogprob, Finish, StreamEvent } from '../../canonical/index.ts';
import { errors, type GatewayError } from '../../core/errors.ts';
import type { StreamDecoder, StreamDecoderOptions } from '../protocol.ts';
import { providerIdentity } from '../provider-identity.ts';
import { parseEventJson } from '../transport/sse.ts';
import { chatStreamError } from './errors.ts';
import { chatFinish } from './finish.ts';
import { chatLogprobs } from './logprobs.ts';
import { chatCitations } from './response.ts';
import { chatUsage } from './usage.ts';
import { ChatCompletionSchema, type ChatChunkToolCallWire, type ChatChunkWire } from './wire.ts';
import { wireCheck } from '../wire-schema.ts';
import { learnDeltaTemplate, type DeltaTemplate } from '../delta-template.ts';

const checkChunk = wireCheck(ChatCompletionSchema, 'a chat completion chunk');

type OpenPart = { readonly kind: 'text' | 'reasoning'; readonly index: number };

/** `templates: false` decodes every chunk in full (tests hold the two ways to the same events). */
export function createChatStreamDecoder(options: StreamDecoderOptions = {}): StreamDecoder {
  const templates = options.templates !== false;
  let started = false;
  let finished = false;
  let nextIndex = 0;
  let open: OpenPart | undefined;
  /** Wire tool-call index → canonical part index, for calls not yet ended. */
  const toolCalls = new Map<number, number>();
  let pendingFinish: Finish | undefined;
  /** Web-search annotations seen so far, attached to the end of the text part they cite. */
  let citations: Citation[] = [];
  /** The wrapping of this stream's plain text chunks, once one was decoded in full (../delta-template.ts). */
  let textChunk: DeltaTemplate | undefined;

  const closeOpen = (events: StreamEvent[]) => {
    if (open === undefined) return;
    if (open.kind === 'reasoning') {
      events.push({ type: 'reasoning-end', index: open.index });
    } else {
      events.push({ type: 'text-end', index: open.index, ...(citations.length > 0 && { citations }) });
      citations = [];
    }
    open = undefined;
  };

  const openPart = (kind: OpenPart['kind'], events: StreamEvent[]): number => {
    if (open?.kind !== kind) {
      closeOpen(events);
      open = { kind, index: nextIndex++ };
      events.push(kind === 'text' ? { type: 'text-start', index: open.index } : { type: 'reasoning-start', index: open.index });
    }
    return open.index;
  };

  /** A chunk's logprobs belong to its text, and still open a text part when the text is empty. */
  const appendText = (text: string, logprobs: readonly ContentLogprob[] | undefined, events: StreamEvent[]) => {
    const withLogprobs = logprobs !== undefined && logprobs.length > 0;
    if (!text && !withLogprobs) return;
    events.push({ type: 'text-delta', index: openPart('text', events), text, ...(withLogprobs && { logprobs }) });
  };

  const toolCallDelta = (call: ChatChunkToolCallWire, position: number, events: StreamEvent[]) => {
    const wireIndex = call.index ?? position;
    let index = toolCalls.get(wireIndex);
    if (index === undefined) {
      closeOpen(events);
      index = nextIndex++;
      toolCalls.set(wireIndex, index);
      events.push({
        type: 'tool-call-start',
        index,
        id: call.id ?? `call_${wireIndex}`,
        name: call.function?.name ?? '',
        ...(call.extra_content != null && { extraContent: call.extra_content }),
      });
    }
    const fragment = call.function?.arguments;
    if (fragment) events.push({ type: 'tool-call-delta', index, argumentsDelta: fragment });
  };

  const closeAll = (events: StreamEvent[]) => {
    closeOpen(events);
    for (const index of toolCalls.values()) events.push({ type: 'tool-call-end', index });
    toolCalls.clear();
  };

  /** An error is final: nothing is decoded after it. */
  const fail = (error: GatewayError): StreamEvent[] => {
    finished = true;
    return [{ type: 'error', error }];
  };

  const complete = (): StreamEvent[] => {
    if (pendingFinish === undefined) return fail(errors.malformedUpstream('a stream that ended before its finish_reason'));
    finished = true;
    return [{ type: 'finish', finish: pendingFinish }];
  };

  return {
    push(message) {
      if (finished) return [];
      if (message.data === '[DONE]') return complete();
      // A chunk like the last plain text chunk but for its text continues the open text part.
      if (textChunk !== undefined && open?.kind === 'text' && pendingFinish === undefined) {
        const text = textChunk(message.data, message.event);
        if (text !== undefined) return text ? [{ type: 'text-delta', index: open.index, text }] : [];
      }
      const parsed = parseEventJson(message.data);
      if (!parsed.ok) return fail(parsed.error);
      const checked = checkChunk(parsed.value);
      if (!checked.ok) return fail(checked.error);
      const chunk = checked.value;
      if (chunk?.error !== undefined && chunk.error !== null) return fail(chatStreamError(chunk.error));
      const events: StreamEvent[] = [];
      if (!started) {
        started = true;
        events.push({ type: 'start', ...providerIdentity(chunk.id, chunk.model) });
      }
      // Only the first choice is read: the gateway always asks for one (n is 1).
      const choice = chunk.choices?.find((candidate) => (candidate.index ?? 0) === 0);
      if (choice !== undefined && pendingFinish === undefined) {
        const delta = choice.delta ?? {};
        const reasoning = delta.reasoning_content ?? delta.reasoning;
        if (reasoning) events.push({ type: 'reasoning-delta', index: openPart('reasoning', events), text: reasoning });
        appendText(delta.content ?? delta.refusal ?? '', chatLogprobs(choice.logprobs), events);
        citations.push(...chatCitations(delta.annotations));
        (delta.tool_calls ?? []).forEach((call, position) => toolCallDelta(call, position, events));
        if (choice.finish_reason) {
          closeAll(events);
          pendingFinish = chatFinish(choice.finish_reason);
        }
      }
      if (chunk.usage !== undefined && chunk.usage !== null) events.push({ type: 'usage', usage: chatUsage(chunk.usage), reported: chunk.usage });
      else if (open?.kind === 'text') {
        const text = plainText(chunk);
        if (text !== undefined && templates) textChunk = learnDeltaTemplate(message.data, text, contentOf, message.event);
      }
      return events;
    },
    end() {
      // Servers that omit `[DONE]` after a finish_reason still delivered a whole answer.
      return finished ? [] : complete();
    },
  };
}

/**
 * The text of a chunk that is one text delta and nothing else the decoder reads (no finish, usage,
 * logprobs, tool calls, reasoning, refusal or annotations), which a template may stand for.
 */
function plainText(chunk: ChatChunkWire): string | undefined {
  if (chunk.error != null || chunk.choices?.length !== 1) return undefined;
  const [choice] = chunk.choices;
  if ((choice.index ?? 0) !== 0 || choice.finish_reason != null || choice.logprobs != null || choice.delta == null) return undefined;
  const { content, role, ...rest } = choice.delta;
  if (typeof content !== 'string' || content === '' || (role != null && role !== 'assistant')) return undefined;
  return Object.values(rest).every((value) => value == null) ? content : undefined;
}

/** Where a plain chunk's text is. */
const contentOf = (parsed: unknown): unknown => (parsed as { choices?: { delta?: { content?: unknown } }[] } | null)?.choices?.[0]?.delta?.content;
