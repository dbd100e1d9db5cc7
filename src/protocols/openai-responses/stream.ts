/**
 * Responses SSE → canonical stream events (PROTOCOLS.md §2 "Streaming", §9.8). The wire already has
 * explicit lifecycles, so this is a mapping: every output item (and, for messages, every content
 * part) becomes one canonical part, indexed in the order it opened. Usage and the finish arrive only
 * in the terminal event; a `data: [DONE]` after it, which some proxies append, is ignored.
 */
import type { StreamEvent } from '../../canonical/index.ts';
import type { StreamDecoder } from '../protocol.ts';
import { parseEventJson } from '../transport/sse.ts';
import { malformedUpstream } from '../transport/upstream-errors.ts';
import { responsesReportedError } from './errors.ts';
import { responsesFinish } from './finish.ts';
import { reasoningSignature } from './reasoning-item.ts';
import { responsesCitations } from './response.ts';
import { responsesUsage } from './usage.ts';
import type { ResponsesEventWire } from './wire.ts';

type OpenPart = { readonly kind: 'text' | 'reasoning' | 'tool_call'; readonly index: number; argumentsSent: boolean; summaryParts: number };

export function createResponsesStreamDecoder(): StreamDecoder {
  let started = false;
  let finished = false;
  let nextIndex = 0;
  let toolCalls = false;
  let refusal = false;
  /** Open parts by `output_index` (items) or `output_index:content_index` (message content parts). */
  const open = new Map<string, OpenPart>();

  const openPart = (key: string, kind: OpenPart['kind']): OpenPart => {
    const part: OpenPart = { kind, index: nextIndex++, argumentsSent: false, summaryParts: 0 };
    open.set(key, part);
    return part;
  };

  const closeAll = (events: StreamEvent[]) => {
    for (const part of open.values()) events.push(endEvent(part));
    open.clear();
  };

  const handle = (event: ResponsesEventWire, name: string): StreamEvent[] => {
    const events: StreamEvent[] = [];
    const itemKey = String(event.output_index ?? 0);
    const contentKey = `${itemKey}:${event.content_index ?? 0}`;
    // `response.created` comes first on the wire; should a server skip it, the canonical start is
    // still emitted before anything else.
    if (!started && name !== 'error' && name !== 'response.failed') {
      started = true;
      events.push({
        type: 'start',
        ...(event.response?.id !== undefined && { providerResponseId: event.response.id }),
        ...(event.response?.model !== undefined && { providerModel: event.response.model }),
      });
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
          events.push({ type: 'tool-call-start', index: part.index, id: item.call_id ?? item.id ?? '', name: item.name ?? '' });
          if (item.arguments) {
            part.argumentsSent = true;
            events.push({ type: 'tool-call-delta', index: part.index, argumentsDelta: item.arguments });
          }
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
      case 'response.refusal.delta': {
        const part = open.get(contentKey);
        if (part !== undefined && event.delta) events.push({ type: 'text-delta', index: part.index, text: event.delta });
        break;
      }
      case 'response.content_part.done': {
        const part = open.get(contentKey);
        if (part !== undefined) {
          open.delete(contentKey);
          const citations = event.part?.type === 'output_text' ? responsesCitations(event.part.annotations) : [];
          events.push({ type: 'text-end', index: part.index, ...(citations.length > 0 && { citations }) });
        }
        break;
      }
      case 'response.function_call_arguments.delta': {
        const part = open.get(itemKey);
        if (part !== undefined && event.delta) {
          part.argumentsSent = true;
          events.push({ type: 'tool-call-delta', index: part.index, argumentsDelta: event.delta });
        }
        break;
      }
      case 'response.function_call_arguments.done': {
        // Servers that skip the deltas still deliver the whole arguments here.
        const part = open.get(itemKey);
        if (part !== undefined && !part.argumentsSent && event.arguments) {
          part.argumentsSent = true;
          events.push({ type: 'tool-call-delta', index: part.index, argumentsDelta: event.arguments });
        }
        break;
      }
      case 'response.reasoning_summary_part.added': {
        const part = open.get(itemKey);
        // Summary parts are separate paragraphs; the canonical part is one text, so they are joined.
        if (part !== undefined && part.summaryParts++ > 0) events.push({ type: 'reasoning-delta', index: part.index, text: '\n\n' });
        break;
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta': {
        const part = open.get(itemKey);
        if (part !== undefined && event.delta) events.push({ type: 'reasoning-delta', index: part.index, text: event.delta });
        break;
      }
      case 'response.output_item.done': {
        const part = open.get(itemKey);
        if (part !== undefined) {
          open.delete(itemKey);
          const signature = part.kind === 'reasoning' ? reasoningSignature(event.item?.id, event.item?.encrypted_content) : undefined;
          events.push(signature !== undefined ? { type: 'reasoning-end', index: part.index, signature } : endEvent(part));
        }
        break;
      }
      case 'response.completed':
      case 'response.incomplete': {
        const response = event.response ?? {};
        closeAll(events);
        finished = true;
        events.push({ type: 'usage', usage: responsesUsage(response.usage) });
        events.push({ type: 'finish', finish: responsesFinish(response, { toolCalls, refusal }) });
        break;
      }
      case 'response.failed':
        finished = true;
        events.push({ type: 'error', error: responsesReportedError(event.response?.error) });
        break;
      case 'error':
        finished = true;
        events.push({ type: 'error', error: responsesReportedError(event) });
        break;
      default:
        // Other documented events (…done summaries, annotations, built-in tool progress) repeat
        // what the events above already carried.
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
      const event = parsed.value as ResponsesEventWire;
      // The data's `type` is authoritative; the SSE event name is the same string when present.
      return handle(event, event?.type ?? message.event ?? '');
    },
    end() {
      return finished ? [] : [{ type: 'error', error: malformedUpstream('a stream that ended before its terminal event') }];
    },
  };
}

function endEvent(part: OpenPart): StreamEvent {
  switch (part.kind) {
    case 'text':
      return { type: 'text-end', index: part.index };
    case 'reasoning':
      return { type: 'reasoning-end', index: part.index };
    case 'tool_call':
      return { type: 'tool-call-end', index: part.index };
    default: {
      const unknown: never = part.kind;
      throw new Error(`unknown part kind ${String(unknown)}`);
    }
  }
}
