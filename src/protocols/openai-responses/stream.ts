/**
 * Responses SSE → canonical stream events (docs/protocols.md, "Streaming"). The wire already has
 * explicit lifecycles, so this is a mapping: every output item (and, for messages, every content
 * part) becomes one canonical part, indexed in the order it opened. Usage and the finish arrive only
 * in the terminal event; a `data: [DONE]` after it, which some proxies append, is ignored. Completed
 * items are read from `output_item.done` (the `added` item may lack what only the end knows: a web
 * search's query, a reasoning item's encrypted content): web search calls are reported as one
 * web-search event before the finish, and the reasoning items before a function call ride on it, as
 * in a whole response.
 * @see https://platform.openai.com/docs/api-reference/responses-streaming
 */
import type { StreamEvent } from '../../canonical/index.ts';
import type { StreamDecoder } from '../protocol.ts';
import { providerIdentity } from '../provider-identity.ts';
import { parseEventJson } from '../transport/sse.ts';
import { errors } from '../../core/errors.ts';
import { responsesEventError, responsesFailedError } from './errors.ts';
import { responsesFinish } from './finish.ts';
import { reasoningCarrier, reasoningSignature } from './reasoning-item.ts';
import { responsesCitations } from './response.ts';
import { responsesUsage } from './usage.ts';
import { responsesWebSearch } from './web-search.ts';
import { ResponsesEventSchema, type ResponsesEventWire, type ResponsesOutputItemWire } from './wire.ts';
import { wireCheck } from '../wire-schema.ts';

const checkEvent = wireCheck(ResponsesEventSchema, 'a response stream event');

type OpenPart = { readonly kind: 'text' | 'reasoning' | 'tool_call'; readonly index: number; argumentsSent: boolean; summaryParts: number };

export function createResponsesStreamDecoder(): StreamDecoder {
  let started = false;
  let finished = false;
  let nextIndex = 0;
  let toolCalls = false;
  let refusal = false;
  /** Open parts by `output_index` (items) or `output_index:content_index` (message content parts). */
  const open = new Map<string, OpenPart>();
  const carrier = reasoningCarrier();
  const searchCalls: ResponsesOutputItemWire[] = [];

  const openPart = (key: string, kind: OpenPart['kind']): OpenPart => {
    const part: OpenPart = { kind, index: nextIndex++, argumentsSent: false, summaryParts: 0 };
    open.set(key, part);
    return part;
  };

  /** Ends the part open under `key`, if any, with what its done event carries. */
  const close = (events: StreamEvent[], key: string, done: ResponsesEventWire) => {
    const part = open.get(key);
    if (part === undefined) return;
    open.delete(key);
    events.push(endEvent(part, done));
  };

  const closeAll = (events: StreamEvent[]) => {
    for (const part of open.values()) events.push(endEvent(part));
    open.clear();
  };

  const sendText = (events: StreamEvent[], type: 'text-delta' | 'reasoning-delta', part: OpenPart | undefined, text: string | null | undefined) => {
    if (part !== undefined && text) events.push({ type, index: part.index, text });
  };

  const sendArguments = (events: StreamEvent[], part: OpenPart | undefined, argumentsDelta: string | null | undefined) => {
    if (part === undefined || !argumentsDelta) return;
    part.argumentsSent = true;
    events.push({ type: 'tool-call-delta', index: part.index, argumentsDelta });
  };

  const handle = (event: ResponsesEventWire, name: string): StreamEvent[] => {
    const events: StreamEvent[] = [];
    const itemKey = String(event.output_index ?? 0);
    const contentKey = `${itemKey}:${event.content_index ?? 0}`;
    // `response.created` comes first on the wire; should a server skip it, the canonical start is
    // still emitted before anything else.
    if (!started && name !== 'error' && name !== 'response.failed') {
      started = true;
      events.push({ type: 'start', ...providerIdentity(event.response?.id, event.response?.model) });
    }
    switch (name) {
      case 'response.created':
      case 'response.queued':
      case 'response.in_progress':
        break;
      case 'response.output_item.added': {
        const item = event.item ?? {};
        if (item.type === 'function_call') {
          toolCalls = true;
          const part = openPart(itemKey, 'tool_call');
          const signature = carrier.toolCallSignature();
          events.push({
            type: 'tool-call-start',
            index: part.index,
            id: item.call_id ?? item.id ?? '',
            name: item.name ?? '',
            ...(signature !== undefined && { signature }),
          });
          sendArguments(events, part, item.arguments);
        } else if (item.type === 'reasoning') {
          events.push({ type: 'reasoning-start', index: openPart(itemKey, 'reasoning').index });
        }
        // A message opens its parts with content_part.added; built-in tool items carry no content.
        break;
      }
      case 'response.content_part.added':
        if (event.part?.type === 'refusal') refusal = true;
        if (event.part?.type === 'output_text' || event.part?.type === 'refusal') {
          events.push({ type: 'text-start', index: openPart(contentKey, 'text').index });
        }
        break;
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        sendText(events, 'text-delta', open.get(contentKey), event.delta);
        break;
      case 'response.function_call_arguments.delta':
        sendArguments(events, open.get(itemKey), event.delta);
        break;
      case 'response.function_call_arguments.done': {
        // Servers that skip the deltas still deliver the whole arguments here.
        const part = open.get(itemKey);
        if (part?.argumentsSent === false) sendArguments(events, part, event.arguments);
        break;
      }
      case 'response.reasoning_summary_part.added': {
        const part = open.get(itemKey);
        // Summary parts are separate paragraphs; the canonical part is one text, so they are joined.
        if (part !== undefined && part.summaryParts++ > 0) events.push({ type: 'reasoning-delta', index: part.index, text: '\n\n' });
        break;
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        sendText(events, 'reasoning-delta', open.get(itemKey), event.delta);
        break;
      // A message's content parts end with their own done event; other items with the item's.
      case 'response.content_part.done':
        close(events, contentKey, event);
        break;
      case 'response.output_item.done': {
        close(events, itemKey, event);
        const item = event.item ?? {};
        if (item.type === 'reasoning') carrier.reasoningDone(item);
        if (item.type === 'web_search_call') searchCalls.push(item);
        break;
      }
      case 'response.completed':
      case 'response.incomplete': {
        const response = event.response ?? {};
        closeAll(events);
        finished = true;
        const webSearch = responsesWebSearch(searchCalls);
        if (webSearch !== undefined) events.push({ type: 'web-search', webSearch });
        events.push({ type: 'usage', usage: responsesUsage(response.usage), ...(response.usage != null && { reported: response.usage }) });
        events.push({ type: 'finish', finish: responsesFinish(response, { toolCalls, refusal }) });
        break;
      }
      case 'response.failed':
        finished = true;
        events.push({ type: 'error', error: responsesFailedError(event.response?.error) });
        break;
      case 'error':
        finished = true;
        events.push({ type: 'error', error: responsesEventError(event) });
        break;
      default:
        // Other documented events (…done summaries, annotations, web search progress) repeat what
        // the events above already carried, or what output_item.done will.
        break;
    }
    return events;
  };

  return {
    push(message) {
      if (finished || message.data === '[DONE]') return [];
      const parsed = parseEventJson(message.data);
      if (!parsed.ok) {
        // An error is final: nothing is decoded after it.
        finished = true;
        return [{ type: 'error', error: parsed.error }];
      }
      const checked = checkEvent(parsed.value);
      if (!checked.ok) {
        finished = true;
        return [{ type: 'error', error: checked.error }];
      }
      const event = checked.value;
      // The data's `type` is authoritative; the SSE event name is the same string when present.
      return handle(event, event?.type ?? message.event ?? '');
    },
    end() {
      return finished ? [] : [{ type: 'error', error: errors.malformedUpstream('a stream that ended before its terminal event') }];
    },
  };
}

/**
 * The end of a part, with the citations or the reasoning signature its done event carries; without
 * one (the terminal event closing what is still open), a bare end.
 */
function endEvent(part: OpenPart, done?: ResponsesEventWire): StreamEvent {
  switch (part.kind) {
    case 'text': {
      const citations = done?.part?.type === 'output_text' ? responsesCitations(done.part.annotations) : [];
      return { type: 'text-end', index: part.index, ...(citations.length > 0 && { citations }) };
    }
    case 'reasoning': {
      const signature = done === undefined ? undefined : reasoningSignature(done.item?.id, done.item?.encrypted_content);
      return { type: 'reasoning-end', index: part.index, ...(signature !== undefined && { signature }) };
    }
    case 'tool_call':
      return { type: 'tool-call-end', index: part.index };
    default: {
      const unknown: never = part.kind;
      throw new Error(`unknown part kind ${String(unknown)}`);
    }
  }
}
