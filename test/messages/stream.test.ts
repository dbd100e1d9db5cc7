/**
 * The messages stream encoder alone, fed canonical events: the event sequence and block indexes,
 * every delta kind, the final usage with the cost, errors; and the official SDK's MessageStream
 * accumulating the frames into the same Message the non-streaming answer is.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import type { StreamEvent } from '../../src/canonical/index.ts';
import { errors } from '../../src/core/errors.ts';
import { PING_FRAME, messagesFrameEncoder } from '../../src/dialects/messages/stream.ts';
import type { TextSettlement } from '../../src/pipeline/kinds/text.ts';
import type { StreamRun } from '../../src/pipeline/text-stream.ts';
import { call, settlement } from './rendering-fixtures.ts';
import { namedEvents } from '../helpers/sse.ts';

interface Frame {
  event: string;
  data: Record<string, unknown>;
}

/** `settled` null: the stream's settlement failed. */
function framesOf(events: StreamEvent[], settled: TextSettlement | null = settlement): Frame[] {
  const run: StreamRun = { call, settlement: settled ?? undefined, events: (async function* () {})() };
  const encode = messagesFrameEncoder(run);
  return namedEvents(events.map(encode).join(''));
}

function messageDelta(frames: Frame[]): { delta: unknown; usage: object } {
  const found = frames.find((frame) => frame.event === 'message_delta');
  assert.ok(found, 'a message_delta');
  return found.data as { delta: unknown; usage: object };
}

const thinkingAndTool: StreamEvent[] = [
  { type: 'start' },
  { type: 'usage', usage: { ...settlement.usage, outputTokens: 1 } },
  { type: 'reasoning-start', index: 0 },
  { type: 'reasoning-delta', index: 0, text: 'Let me ' },
  { type: 'reasoning-delta', index: 0, text: 'think.' },
  { type: 'reasoning-end', index: 0, signature: { family: 'anthropic', value: 'sig-1' } },
  { type: 'reasoning-start', index: 1, redacted: true },
  { type: 'reasoning-end', index: 1, signature: { family: 'anthropic', value: 'opaque' } },
  { type: 'text-start', index: 2 },
  { type: 'text-delta', index: 2, text: 'Calling ' },
  { type: 'text-delta', index: 2, text: 'the tool.' },
  { type: 'text-end', index: 2 },
  { type: 'tool-call-start', index: 3, id: 'toolu_1', name: 'get_weather' },
  { type: 'tool-call-delta', index: 3, argumentsDelta: '{"city":' },
  { type: 'tool-call-delta', index: 3, argumentsDelta: '"Paris"}' },
  { type: 'tool-call-end', index: 3 },
  { type: 'usage', usage: settlement.usage },
  { type: 'finish', finish: { reason: 'tool_calls', raw: 'tool_use' } },
];

describe('messagesFrameEncoder', () => {
  test('message_start with the upstream input usage, blocks with their deltas and indexes, message_delta with the cost, message_stop', () => {
    const frames = framesOf(thinkingAndTool);
    assert.deepEqual(
      frames.map((frame) => `${frame.event}${'index' in frame.data ? `:${frame.data.index}` : ''}`),
      [
        'message_start',
        'content_block_start:0',
        'content_block_delta:0',
        'content_block_delta:0',
        'content_block_delta:0',
        'content_block_stop:0',
        'content_block_start:1',
        'content_block_stop:1',
        'content_block_start:2',
        'content_block_delta:2',
        'content_block_delta:2',
        'content_block_stop:2',
        'content_block_start:3',
        'content_block_delta:3',
        'content_block_delta:3',
        'content_block_stop:3',
        'message_delta',
        'message_stop',
      ],
    );
    assert.deepEqual(frames[0].data.message, {
      id: 'msg_abc',
      type: 'message',
      role: 'assistant',
      model: 'gateway/m',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      usage: {
        input_tokens: 5,
        output_tokens: 1,
        cache_creation_input_tokens: 10,
        cache_read_input_tokens: 2,
        cache_creation: { ephemeral_5m_input_tokens: 6, ephemeral_1h_input_tokens: 4 },
      },
    });
    assert.deepEqual(
      frames.filter((frame) => frame.event === 'content_block_delta').map((frame) => frame.data.delta),
      [
        { type: 'thinking_delta', thinking: 'Let me ' },
        { type: 'thinking_delta', thinking: 'think.' },
        { type: 'signature_delta', signature: 'sig-1' },
        { type: 'text_delta', text: 'Calling ' },
        { type: 'text_delta', text: 'the tool.' },
        { type: 'input_json_delta', partial_json: '{"city":' },
        { type: 'input_json_delta', partial_json: '"Paris"}' },
      ],
    );
    assert.deepEqual(frames[6].data.content_block, { type: 'redacted_thinking', data: 'opaque' });
    assert.deepEqual(frames[12].data.content_block, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} });
    assert.deepEqual(frames.at(-2)?.data, {
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null, stop_details: null },
      usage: {
        input_tokens: 5,
        output_tokens: 7,
        cache_creation_input_tokens: 10,
        cache_read_input_tokens: 2,
        cache_creation: { ephemeral_5m_input_tokens: 6, ephemeral_1h_input_tokens: 4 },
        cost: '0.000000123456',
      },
    });
  });

  test("the SDK's MessageStream accumulates the frames into the Message, tool input parsed", async () => {
    const lines = framesOf(thinkingAndTool).map((frame) => `${JSON.stringify(frame.data)}\n`);
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const line of lines) controller.enqueue(new TextEncoder().encode(line));
        controller.close();
      },
    });
    const stream = MessageStream.fromReadableStream(body);
    const texts: string[] = [];
    stream.on('text', (text) => texts.push(text));
    const message = await stream.finalMessage();
    assert.deepEqual(texts, ['Calling ', 'the tool.']);
    assert.deepEqual(message.content, [
      { type: 'thinking', thinking: 'Let me think.', signature: 'sig-1' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Calling the tool.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    assert.equal(message.stop_reason, 'tool_use');
    assert.equal(message.usage.output_tokens, 7);
    assert.equal(message.usage.input_tokens, 5);
  });

  test('a stop sequence, deltas before any block start, and blocks left open are closed before message_delta', () => {
    const frames = framesOf([
      { type: 'start' },
      { type: 'text-delta', index: 0, text: 'Hi' },
      { type: 'tool-call-start', index: 1, id: 'a', name: 'f' },
      { type: 'tool-call-start', index: 2, id: 'b', name: 'g' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{}' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '{}' },
      { type: 'finish', finish: { reason: 'stop', raw: 'stop_sequence', stopSequence: 'END' } },
    ]);
    assert.deepEqual(
      frames.map((frame) => `${frame.event}${'index' in frame.data ? `:${frame.data.index}` : ''}`),
      [
        'message_start',
        'content_block_start:0',
        'content_block_delta:0',
        'content_block_start:1',
        'content_block_start:2',
        'content_block_delta:1',
        'content_block_delta:2',
        'content_block_stop:0',
        'content_block_stop:1',
        'content_block_stop:2',
        'message_delta',
        'message_stop',
      ],
    );
    assert.deepEqual(messageDelta(frames).delta, { stop_reason: 'stop_sequence', stop_sequence: 'END', stop_details: null });
  });

  test('an error after the first byte is one error event in the messages error shape', () => {
    const frames = framesOf([{ type: 'start' }, { type: 'text-delta', index: 0, text: 'Hi' }, { type: 'error', error: errors.malformedUpstream('garbage') }]);
    assert.deepEqual(
      frames.map((frame) => frame.event),
      ['message_start', 'content_block_start', 'content_block_delta', 'error'],
    );
    const error = frames[3].data.error as Record<string, unknown>;
    assert.equal(error.type, 'api_error');
    assert.equal(error.code, 'upstream_error');
    assert.match(String(error.message), /garbage/);
  });

  test('without a settlement (ledger unreachable) the final usage has no cost', () => {
    const frames = framesOf(
      [{ type: 'start' }, { type: 'usage', usage: settlement.usage }, { type: 'finish', finish: { reason: 'stop', raw: 'end_turn' } }],
      null,
    );
    assert.equal('cost' in messageDelta(frames).usage, false);
  });

  test('the frames written from templates are the bytes JSON.stringify gives, for texts that need escaping', () => {
    const text = 'a "quote", a \\ backslash,\nlines, \u0000, \u2028, é, 🙂 and </script>';
    const run: StreamRun = { call, settlement, events: (async function* () {})() };
    const encode = messagesFrameEncoder(run);
    const output = [
      ...thinkingAndTool.slice(0, 4),
      { type: 'reasoning-delta', index: 0, text },
      { type: 'reasoning-end', index: 0, signature: { family: 'anthropic', value: text } },
      { type: 'text-start', index: 2 },
      { type: 'text-delta', index: 2, text },
      { type: 'text-end', index: 2 },
      { type: 'tool-call-start', index: 3, id: 'toolu_1', name: 'f' },
      { type: 'tool-call-delta', index: 3, argumentsDelta: text },
      { type: 'tool-call-end', index: 3 },
      { type: 'finish', finish: { reason: 'tool_calls', raw: 'tool_use' } },
    ]
      .map((event) => encode(event as StreamEvent))
      .join('');
    const frames = output.split(/(?<=\n\n)/);
    const written = namedEvents(output).map(({ event, data }) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    assert.deepEqual(frames, written);
    const deltas = namedEvents(output).filter((frame) => frame.event === 'content_block_delta');
    assert.deepEqual(
      deltas.slice(1).map((frame) => Object.values(frame.data.delta as object)[1]),
      [text, text, text, text],
    );
  });

  test('the ping frame is the one the SDK skips', () => {
    assert.equal(PING_FRAME, 'event: ping\ndata: {"type":"ping"}\n\n');
  });

  test("a tool call's opaque data goes first as a whole redacted_thinking block, the indexes following it", () => {
    const frames = framesOf([
      { type: 'start' },
      { type: 'tool-call-start', index: 0, id: 'c1', name: 'f', signature: { family: 'gemini', value: 'thought-sig' } },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{}' },
      { type: 'tool-call-end', index: 0 },
      { type: 'finish', finish: { reason: 'tool_calls', raw: 'STOP' } },
    ]);
    assert.deepEqual(
      frames.map((frame) => `${frame.event}${'index' in frame.data ? `:${frame.data.index}` : ''}`),
      [
        'message_start',
        'content_block_start:0',
        'content_block_stop:0',
        'content_block_start:1',
        'content_block_delta:1',
        'content_block_stop:1',
        'message_delta',
        'message_stop',
      ],
    );
    assert.equal((frames[1].data.content_block as { type: string }).type, 'redacted_thinking');
  });
});
