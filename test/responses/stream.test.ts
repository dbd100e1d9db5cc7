/**
 * The Responses stream encoder alone, fed canonical events: the event sequence with its increasing
 * sequence numbers, every item kind, the terminal event by finish with the charged usage, errors;
 * and the official SDK's `responses.stream()` accumulating the frames into the same Response the
 * non-streaming answer is.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI from 'openai';
import type { CanonicalResult, StreamEvent } from '../../src/canonical/index.ts';
import { errors } from '../../src/core/errors.ts';
import { encodeResponse } from '../../src/dialects/responses/encode.ts';
import { responsesFrameEncoder } from '../../src/dialects/responses/stream.ts';
import type { TextSettlement } from '../../src/pipeline/kinds/text.ts';
import type { StreamRun } from '../../src/pipeline/text-stream.ts';
import { call, settlement } from '../messages/rendering-fixtures.ts';
import { namedEvents } from '../helpers/sse.ts';

interface Frame {
  event: string;
  data: Record<string, unknown> & { sequence_number: number };
}

function encode(events: readonly StreamEvent[], settled: TextSettlement | null = settlement): string {
  const run: StreamRun = { call, settlement: settled ?? undefined, events: (async function* () {})() };
  return events.map(responsesFrameEncoder(run)).join('');
}

/** `settled` null: the stream's settlement failed. */
function framesOf(events: readonly StreamEvent[], settled: TextSettlement | null = settlement): Frame[] {
  return namedEvents<Frame['data']>(encode(events, settled));
}

const reasoningTextAndTools: StreamEvent[] = [
  { type: 'start' },
  { type: 'usage', usage: { ...settlement.usage, outputTokens: 1 } },
  { type: 'reasoning-start', index: 0 },
  { type: 'reasoning-delta', index: 0, text: 'Let me ' },
  { type: 'reasoning-delta', index: 0, text: 'think.' },
  { type: 'reasoning-end', index: 0, signature: { family: 'anthropic', value: 'sig-1' } },
  { type: 'text-start', index: 1 },
  { type: 'text-delta', index: 1, text: 'Calling ' },
  { type: 'text-delta', index: 1, text: 'the tool.' },
  { type: 'text-end', index: 1, citations: [{ url: 'https://example.com/a', title: 'A', startIndex: 0, endIndex: 7 }] },
  // Two parallel calls whose deltas interleave, as an OpenAI-format upstream sends them.
  { type: 'tool-call-start', index: 2, id: 'call_1', name: 'get_weather' },
  { type: 'tool-call-start', index: 3, id: 'call_2', name: 'get_time' },
  { type: 'tool-call-delta', index: 2, argumentsDelta: '{"city":' },
  { type: 'tool-call-delta', index: 3, argumentsDelta: '{}' },
  { type: 'tool-call-delta', index: 2, argumentsDelta: '"Paris"}' },
  { type: 'tool-call-end', index: 2 },
  { type: 'tool-call-end', index: 3 },
  { type: 'usage', usage: settlement.usage },
  { type: 'finish', finish: { reason: 'tool_calls', raw: null } },
];

/** The canonical result the same events assemble into, as the pipeline stores a stream's output. */
const assembled: CanonicalResult = {
  content: [
    { type: 'reasoning', text: 'Let me think.', signature: { family: 'anthropic', value: 'sig-1' } },
    { type: 'text', text: 'Calling the tool.' },
    { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'tool_call', id: 'call_2', name: 'get_time', arguments: '{}' },
  ],
  finish: { reason: 'tool_calls', raw: null },
  usage: settlement.usage,
  citations: [{ url: 'https://example.com/a', title: 'A', startIndex: 0, endIndex: 7 }],
};

/** An SDK client whose transport answers every request with these bytes as an event stream. */
function clientAnswering(body: string): OpenAI {
  return new OpenAI({
    apiKey: 'unused',
    baseURL: 'http://127.0.0.1:1/v1',
    maxRetries: 0,
    fetch: async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } }),
  });
}

/** A Response as the wire sent it: without what the SDK derives (`output_text`, the `parsed` fields of its parser). */
function withoutSdkFields(response: object): unknown {
  const derived = new Set(['output_text', 'output_parsed', 'parsed', 'parsed_arguments']);
  return JSON.parse(JSON.stringify(response, (key, value) => (derived.has(key) ? undefined : value)));
}

describe('responsesFrameEncoder', () => {
  test('the event sequence: created, in_progress, each item added → part → deltas → done, then the terminal event; sequence numbers 0, 1, 2…', () => {
    const frames = framesOf(reasoningTextAndTools);
    assert.deepEqual(
      frames.map((frame) => frame.event),
      [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.reasoning_summary_part.added',
        'response.reasoning_summary_text.delta',
        'response.reasoning_summary_text.delta',
        'response.reasoning_summary_text.done',
        'response.reasoning_summary_part.done',
        'response.output_item.done',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.annotation.added',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.output_item.added',
        'response.output_item.added',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.delta',
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.completed',
      ],
    );
    assert.deepEqual(
      frames.map((frame) => frame.data.sequence_number),
      frames.map((_, index) => index),
    );
    const created = frames[0].data.response as { id: string; status: string; output: unknown[]; usage?: unknown };
    assert.deepEqual([created.id, created.status, created.output, created.usage], ['resp_abc', 'in_progress', [], undefined]);
    // The parallel calls keep their own output indexes, and each delta names its own.
    const argumentDeltas = frames
      .filter((frame) => frame.event === 'response.function_call_arguments.delta')
      .map((frame) => [frame.data.output_index, frame.data.delta]);
    assert.deepEqual(argumentDeltas, [
      [2, '{"city":'],
      [3, '{}'],
      [2, '"Paris"}'],
    ]);
  });

  test('the terminal response holds every item and the charged usage: the same object as the non-streaming answer', () => {
    const terminal = framesOf(reasoningTextAndTools).at(-1)!;
    assert.deepEqual(terminal.data.response, encodeResponse(assembled, call, settlement));
  });

  test("the SDK's responses.stream() accumulates the frames: finalResponse is the Response, events and output_text as the SDK derives them", async () => {
    const stream = clientAnswering(encode(reasoningTextAndTools)).responses.stream({ model: 'gateway/m', input: 'hi' });
    const texts: string[] = [];
    stream.on('response.output_text.delta', (event) => texts.push(event.delta));
    const final = await stream.finalResponse();
    assert.equal(final.output_text, 'Calling the tool.');
    assert.deepEqual(texts, ['Calling ', 'the tool.']);
    assert.deepEqual(withoutSdkFields(final), encodeResponse(assembled, call, settlement));
  });

  test('deltas without their start open their item; a part left open is closed before the terminal event', async () => {
    const events: StreamEvent[] = [
      { type: 'start' },
      { type: 'text-delta', index: 0, text: 'Hi' },
      { type: 'finish', finish: { reason: 'stop', raw: 'completed' } },
    ];
    const frames = framesOf(events);
    assert.deepEqual(
      frames.map((frame) => frame.event),
      [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ],
    );
    const final = await clientAnswering(encode(events)).responses.stream({ model: 'gateway/m', input: 'hi' }).finalResponse();
    assert.equal(final.output_text, 'Hi');
  });

  for (const [reason, event, details] of [
    ['length', 'response.incomplete', { reason: 'max_output_tokens' }],
    ['content_filter', 'response.incomplete', { reason: 'content_filter' }],
    ['stop', 'response.completed', null],
  ] as const) {
    test(`finish ${reason} → ${event}`, () => {
      const terminal = framesOf([{ type: 'start' }, { type: 'finish', finish: { reason, raw: null } }]).at(-1)!;
      const response = terminal.data.response as { status: string; incomplete_details: unknown; output: unknown[] };
      assert.equal(terminal.event, event);
      assert.deepEqual([response.status, response.incomplete_details, response.output], [event.slice('response.'.length), details, []]);
    });
  }

  test('without a settlement (the ledger failed) the usage goes out as reported, without a cost', () => {
    const terminal = framesOf(reasoningTextAndTools, null).at(-1)!;
    const usage = (terminal.data.response as { usage: Record<string, unknown> }).usage;
    assert.equal(usage.input_tokens, 17);
    assert.equal('cost' in usage, false);
  });

  test('an error after the start is one error event, and the SDK throws it', async () => {
    const events: StreamEvent[] = [
      { type: 'start' },
      { type: 'text-delta', index: 0, text: 'Hi' },
      { type: 'error', error: errors.upstreamReported('the upstream connection was reset', false) },
    ];
    const frames = framesOf(events);
    const last = frames.at(-1)!;
    assert.equal(last.event, 'error');
    assert.deepEqual(
      { code: last.data.code, param: last.data.param, sequence: last.data.sequence_number },
      { code: errors.upstreamReported('x', false).code, param: null, sequence: frames.length - 1 },
    );
    assert.match(String(last.data.message), /reset/);
    await assert.rejects(clientAnswering(encode(events)).responses.stream({ model: 'gateway/m', input: 'hi' }).finalResponse(), OpenAI.APIError);
  });
});
