/**
 * Server-sent events off an upstream body, split by eventsource-parser (never by hand: events may
 * straddle chunks, carry several data lines, CRLF endings or comments).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { errors, type GatewayError } from '../../core/errors.ts';

export type SseMessage = Pick<EventSourceMessage, 'event' | 'data'>;

/**
 * The complete SSE messages of a body, fed the chunks of each read together (keep-alive comments
 * skipped): a read often holds many events, and one hand-over per read instead of one per event is
 * what keeps a burst of small events cheap.
 */
export class SseReader {
  #pending: SseMessage[] = [];
  readonly #parser = createParser({ onEvent: (message) => this.#pending.push({ event: message.event, data: message.data }) });
  readonly #text = new TextDecoder();

  /** The messages the chunks complete. */
  feed(chunks: readonly Uint8Array[]): SseMessage[] {
    for (const chunk of chunks) this.#parser.feed(this.#text.decode(chunk, { stream: true }));
    return this.#take();
  }

  /** The messages completed by the body's end. */
  end(): SseMessage[] {
    this.#parser.feed(this.#text.decode());
    return this.#take();
  }

  #take(): SseMessage[] {
    const messages = this.#pending;
    if (messages.length > 0) this.#pending = [];
    return messages;
  }
}

/** Parses one event's JSON data; a malformed chunk becomes an error, never an exception. */
export function parseEventJson(data: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: GatewayError } {
  try {
    return { ok: true, value: JSON.parse(data) };
  } catch (cause) {
    return { ok: false, error: errors.malformedUpstream('a stream chunk that is not valid JSON', cause) };
  }
}
