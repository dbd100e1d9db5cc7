/**
 * Helpers for fixture-driven translation tests: read a recorded-style fixture beside a test, and run
 * SSE text through a protocol's stream decoder the way the transport does (split into chunks at
 * arbitrary byte boundaries, so events straddling chunks are exercised too).
 */
import { readFileSync } from 'node:fs';
import type { StreamEvent } from '../../src/canonical/index.ts';
import type { StreamDecoder } from '../../src/protocols/protocol.ts';
import { SseReader } from '../../src/protocols/transport/sse.ts';

/** `directory` is the test's `import.meta.dirname`; fixtures live in its `fixtures/` folder. */
export function readFixture(directory: string, name: string): string {
  return readFileSync(`${directory}/fixtures/${name}`, 'utf8');
}

export function readJsonFixture(directory: string, name: string): unknown {
  return JSON.parse(readFixture(directory, name));
}

/**
 * Decodes SSE text completely: every message pushed, then `end()`. Usage events are given without
 * the provider's own usage object they carry (`reported`), which test/clients/recordings.test.ts
 * follows to the request log.
 */
export async function decodeSse(decoder: StreamDecoder, text: string, chunkSize = 7): Promise<StreamEvent[]> {
  const bytes = new TextEncoder().encode(text);
  function* chunks() {
    for (let offset = 0; offset < bytes.length; offset += chunkSize) yield bytes.subarray(offset, offset + chunkSize);
  }
  const events: StreamEvent[] = [];
  const reader = new SseReader();
  for (const chunk of chunks()) for (const message of reader.feed([chunk])) events.push(...decoder.push(message));
  for (const message of reader.end()) events.push(...decoder.push(message));
  events.push(...decoder.end());
  return events.map((event) => (event.type === 'usage' ? { type: 'usage', usage: event.usage } : event));
}

/** Stream events with errors reduced to comparable fields (status, code, retryable). */
export function comparable(events: readonly StreamEvent[]): unknown[] {
  return events.map((event) =>
    event.type === 'error' ? { type: 'error', status: event.error.status, code: event.error.code, retryable: event.error.retryable } : event,
  );
}
