/**
 * Splits the text of a server-sent event stream whose events are named (Messages, Responses) into
 * its events, asserting that each is one `event:` line and one JSON `data:` line, and that the data's
 * `type` names the event, as both formats do.
 */
import assert from 'node:assert/strict';

export interface NamedEvent<Data = Record<string, unknown>> {
  readonly event: string;
  readonly data: Data;
}

export function namedEvents<Data extends Record<string, unknown> = Record<string, unknown>>(text: string): NamedEvent<Data>[] {
  return text
    .split(/(?<=\n\n)/)
    .filter(Boolean)
    .map((frame) => {
      const match = /^event: ([\w.]+)\ndata: (.*)\n\n$/s.exec(frame);
      assert.ok(match, `not one SSE event: ${JSON.stringify(frame)}`);
      const data = JSON.parse(match[2]) as Data;
      assert.equal(data.type, match[1], 'the data names the event it is');
      return { event: match[1], data };
    });
}
