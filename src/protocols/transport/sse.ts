/**
 * Server-sent events off an upstream body, split by eventsource-parser (never by hand: events may
 * straddle chunks, carry several data lines, CRLF endings or comments).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { errors, type GatewayError } from '../../core/errors.ts';

export type SseMessage = Pick<EventSourceMessage, 'event' | 'data'>;

/**
 * Yields the complete SSE messages of each body chunk together (keep-alive comments skipped): a
 * chunk often holds many events, and one hand-over per chunk instead of one per event is what keeps
 * a burst of small events cheap.
 */
export async function* readSseMessages(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<readonly SseMessage[]> {
  let pending: SseMessage[] = [];
  const parser = createParser({ onEvent: (message) => pending.push({ event: message.event, data: message.data }) });
  const text = new TextDecoder();
  for await (const chunk of body) {
    parser.feed(typeof chunk === 'string' ? chunk : text.decode(chunk, { stream: true }));
    if (pending.length > 0) {
      yield pending;
      pending = [];
    }
  }
  parser.feed(text.decode());
  if (pending.length > 0) yield pending;
}

/** Parses one event's JSON data; a malformed chunk becomes an error, never an exception. */
export function parseEventJson(data: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: GatewayError } {
  try {
    return { ok: true, value: JSON.parse(data) };
  } catch (cause) {
    return { ok: false, error: errors.malformedUpstream('a stream chunk that is not valid JSON', cause) };
  }
}
