import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createAnthropicStreamDecoder } from '../../../src/protocols/anthropic/stream.ts';
import { comparable, decodeSse, readFixture } from '../../simulators/fixtures.ts';
import { cutTextEvents, finishEvent, reasoningEvents, startEvent, textEvents, toolCallEvents, UPSTREAM_FAULT, usageEvent } from '../helpers.ts';

const here = import.meta.dirname;
const decode = (text: string, chunkSize?: number) => decodeSse(createAnthropicStreamDecoder(), text, chunkSize);
const SONNET = 'claude-sonnet-4-5-20250929';

describe('anthropic: stream fixtures → canonical events', () => {
  test('text.sse: ping skipped, usage from message_start then message_delta', async () => {
    assert.deepEqual(await decode(readFixture(here, 'text.sse')), [
      startEvent('msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY', SONNET),
      usageEvent(25, 0),
      ...textEvents(0, 'Hello', '!'),
      usageEvent(25, 15),
      finishEvent('stop', 'end_turn'),
    ]);
  });

  test('tools.sse: input_json_delta fragments; a call without arguments gets {}', async () => {
    assert.deepEqual(await decode(readFixture(here, 'tools.sse')), [
      startEvent('msg_014p7gG3wDgGV9EUtLvnow3U', SONNET),
      usageEvent(472, 0),
      ...textEvents(0, "Okay, let's check the weather."),
      ...toolCallEvents(1, { id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather' }, '{"location":', ' "San Francisco, CA"}'),
      ...toolCallEvents(2, { id: 'toolu_01CxN1oyXBc9GCRoWQbwe7Jd', name: 'get_time' }, '{}'),
      usageEvent(472, 89),
      finishEvent('tool_calls', 'tool_use'),
    ]);
  });

  test('thinking.sse: thinking deltas, the signature on the reasoning end', async () => {
    assert.deepEqual(await decode(readFixture(here, 'thinking.sse')), [
      startEvent('msg_01ThinkStream', SONNET),
      usageEvent(52, 0),
      ...reasoningEvents(0, ['Let me solve this step by step:\n\n1. First break down 27 * 453', '\n2. 453 = 400 + 50 + 3'], {
        family: 'anthropic',
        value: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds8',
      }),
      ...textEvents(1, '27 * 453 = 12,231'),
      usageEvent(52, 188, { reasoningTokens: 170 }),
      finishEvent('stop', 'end_turn'),
    ]);
  });

  test("thinking-tools.sse: the finished thinking block rides on the next tool call's start", async () => {
    const events = await decode(readFixture(here, 'thinking-tools.sse'));
    const thinking = {
      type: 'thinking',
      thinking: 'The user wants the weather in Paris. I should call get_weather.',
      signature: 'WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve/op91XWHOEBLLqIOMfFG/UvLEczmEsUjavL',
    };
    assert.deepEqual(
      events.find((event) => event.type === 'tool-call-start'),
      {
        type: 'tool-call-start',
        index: 1,
        id: 'toolu_01CswdEQBMshySk6Y9DFKrfq',
        name: 'get_weather',
        signature: { family: 'anthropic', value: JSON.stringify([thinking]) },
      },
    );
  });

  test('cached-usage.sse: cache counts from message_start, overwritten by message_delta; the 1-hour part from message_start', async () => {
    const events = await decode(readFixture(here, 'cached-usage.sse'));
    const cache = { cacheReadTokens: 1200, cacheWriteTokens: 2000, cacheWrite1hTokens: 500 };
    assert.deepEqual(
      events.filter((event) => event.type === 'usage'),
      [usageEvent(21, 0, cache), usageEvent(21, 6, cache)],
    );
  });

  test('web-search.sse: the query from its fragments, a web-search event per search that ran and with the billed count, the citation on its block', async () => {
    const searched = { queries: ['latest quantum computing breakthroughs 2025'], billedQueries: 1 };
    const text = textEvents(1, 'Error correction', ' passed the threshold.');
    assert.deepEqual(await decode(readFixture(here, 'web-search.sse')), [
      startEvent('msg_abc123', SONNET),
      usageEvent(2679, 0),
      ...textEvents(0, "I'll search for the latest breakthroughs."),
      { type: 'web-search', webSearch: searched },
      ...text.slice(0, -1),
      {
        type: 'text-end',
        index: 1,
        citations: [{ url: 'https://example.com', title: 'Quantum Computing Breakthroughs in 2025', startIndex: 41, endIndex: 79 }],
      },
      usageEvent(2679, 510),
      { type: 'web-search', webSearch: searched },
      finishEvent('stop', 'end_turn'),
    ]);
  });

  test('mid-stream-error.sse: event: error (overloaded) ends the stream as a retryable error', async () => {
    assert.deepEqual(comparable(await decode(readFixture(here, 'mid-stream-error.sse'))), [
      startEvent('msg_01ErrStream', SONNET),
      usageEvent(10, 0),
      ...cutTextEvents(0, 'Partial'),
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
    assert.deepEqual(comparable(await decode(cut)).at(-1), UPSTREAM_FAULT);
  });

  test('redacted thinking keeps its data as the signature; events before message_start are ignored', async () => {
    const events = await decode(
      [
        'event: ping\ndata: {"type":"ping"}\n\n',
        'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"c","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}\n\n',
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"opaque"}}\n\n',
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":5}}\n\n',
        'event: message_stop\ndata: {"type":"message_stop"}\n\n',
      ].join(''),
    );
    assert.deepEqual(events.slice(2), [
      { type: 'reasoning-start', index: 0, redacted: true },
      { type: 'reasoning-end', index: 0, signature: { family: 'anthropic', value: 'opaque' } },
      usageEvent(1, 5),
      finishEvent('length', 'max_tokens'),
    ]);
  });

  test('a malformed event is an error event, not an exception', async () => {
    const events = comparable(
      await decode('event: message_start\ndata: {"type":"message_start","message":{}}\n\nevent: content_block_start\ndata: {"type": \n\n'),
    );
    assert.deepEqual(events.at(-1), UPSTREAM_FAULT);
  });
});
