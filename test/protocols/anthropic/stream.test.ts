import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAnthropicStreamDecoder } from '../../../src/protocols/anthropic/stream.ts';
import { comparable, decodeSse, readFixture } from '../../simulators/fixtures.ts';

const here = import.meta.dirname;
const decode = (text: string, chunkSize?: number) => decodeSse(createAnthropicStreamDecoder(), text, chunkSize);
const usage = (inputTokens: number, outputTokens: number, extra: object = {}) => ({
  type: 'usage',
  usage: { inputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens, reasoningTokens: 0, ...extra },
});

describe('anthropic: stream fixtures → canonical events', () => {
  test('text.sse: ping skipped, usage from message_start then message_delta', async () => {
    assert.deepEqual(await decode(readFixture(here, 'text.sse')), [
      { type: 'start', providerResponseId: 'msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY', providerModel: 'claude-sonnet-4-5-20250929' },
      usage(25, 1),
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Hello' },
      { type: 'text-delta', index: 0, text: '!' },
      { type: 'text-end', index: 0 },
      usage(25, 15),
      { type: 'finish', finish: { reason: 'stop', raw: 'end_turn' } },
    ]);
  });

  test('tools.sse: input_json_delta fragments; a call without arguments gets {}', async () => {
    assert.deepEqual(await decode(readFixture(here, 'tools.sse')), [
      { type: 'start', providerResponseId: 'msg_014p7gG3wDgGV9EUtLvnow3U', providerModel: 'claude-sonnet-4-5-20250929' },
      usage(472, 2),
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: "Okay, let's check the weather." },
      { type: 'text-end', index: 0 },
      { type: 'tool-call-start', index: 1, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"location":' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: ' "San Francisco, CA"}' },
      { type: 'tool-call-end', index: 1 },
      { type: 'tool-call-start', index: 2, id: 'toolu_01CxN1oyXBc9GCRoWQbwe7Jd', name: 'get_time' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '{}' },
      { type: 'tool-call-end', index: 2 },
      usage(472, 89),
      { type: 'finish', finish: { reason: 'tool_calls', raw: 'tool_use' } },
    ]);
  });

  test('thinking.sse: thinking deltas, the signature on the reasoning end', async () => {
    assert.deepEqual(await decode(readFixture(here, 'thinking.sse')), [
      { type: 'start', providerResponseId: 'msg_01ThinkStream', providerModel: 'claude-sonnet-4-5-20250929' },
      usage(52, 3),
      { type: 'reasoning-start', index: 0 },
      { type: 'reasoning-delta', index: 0, text: 'Let me solve this step by step:\n\n1. First break down 27 * 453' },
      { type: 'reasoning-delta', index: 0, text: '\n2. 453 = 400 + 50 + 3' },
      { type: 'reasoning-end', index: 0, signature: { family: 'anthropic', value: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds8' } },
      { type: 'text-start', index: 1 },
      { type: 'text-delta', index: 1, text: '27 * 453 = 12,231' },
      { type: 'text-end', index: 1 },
      usage(52, 188, { reasoningTokens: 170 }),
      { type: 'finish', finish: { reason: 'stop', raw: 'end_turn' } },
    ]);
  });

  test('thinking-tools.sse: the finished thinking block rides on the next tool call\'s start', async () => {
    const events = await decode(readFixture(here, 'thinking-tools.sse'));
    const thinking = { type: 'thinking', thinking: 'The user wants the weather in Paris. I should call get_weather.', signature: 'WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve/op91XWHOEBLLqIOMfFG/UvLEczmEsUjavL' };
    assert.deepEqual(events.find((event) => event.type === 'tool-call-start'), {
      type: 'tool-call-start',
      index: 1,
      id: 'toolu_01CswdEQBMshySk6Y9DFKrfq',
      name: 'get_weather',
      signature: { family: 'anthropic', value: JSON.stringify([thinking]) },
    });
  });

  test('cached-usage.sse: cache counts from message_start, overwritten by message_delta', async () => {
    const events = await decode(readFixture(here, 'cached-usage.sse'));
    assert.deepEqual(events.filter((event) => event.type === 'usage'), [
      usage(21, 1, { cacheReadTokens: 1200, cacheWriteTokens: 2000 }),
      usage(21, 6, { cacheReadTokens: 1200, cacheWriteTokens: 2000 }),
    ]);
  });

  test('mid-stream-error.sse: event: error (overloaded) ends the stream as a retryable error', async () => {
    assert.deepEqual(comparable(await decode(readFixture(here, 'mid-stream-error.sse'))), [
      { type: 'start', providerResponseId: 'msg_01ErrStream', providerModel: 'claude-sonnet-4-5-20250929' },
      usage(10, 1),
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Partial' },
      { type: 'error', status: 503, code: 'upstream_unavailable', retryable: true },
    ]);
  });

  test('the same events whatever the chunking', async () => {
    const text = readFixture(here, 'thinking.sse');
    assert.deepEqual(await decode(text, 1), await decode(text, text.length));
  });

  test('a body cut before message_stop ends in an error', async () => {
    const text = readFixture(here, 'text.sse');
    const cut = text.slice(0, text.indexOf('event: message_delta'));
    assert.deepEqual(comparable(await decode(cut)).at(-1), { type: 'error', status: 502, code: 'upstream_error', retryable: true });
  });

  test('redacted thinking keeps its data as the signature; events before message_start are ignored', async () => {
    const events = await decode([
      'event: ping\ndata: {"type":"ping"}\n\n',
      'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"c","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}\n\n',
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"opaque"}}\n\n',
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":5}}\n\n',
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ].join(''));
    assert.deepEqual(events.slice(2), [
      { type: 'reasoning-start', index: 0, redacted: true },
      { type: 'reasoning-end', index: 0, signature: { family: 'anthropic', value: 'opaque' } },
      usage(1, 5),
      { type: 'finish', finish: { reason: 'length', raw: 'max_tokens' } },
    ]);
  });

  test('a malformed event is an error event, not an exception', async () => {
    const events = comparable(await decode('event: message_start\ndata: {"type":"message_start","message":{}}\n\nevent: content_block_start\ndata: {"type": \n\n'));
    assert.deepEqual(events.at(-1), { type: 'error', status: 502, code: 'upstream_error', retryable: true });
  });
});
