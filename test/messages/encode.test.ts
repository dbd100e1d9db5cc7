/** The Message rendering alone, fed canonical results: blocks, stop reasons, usage and cost. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CanonicalResult, Finish } from '../../src/canonical/index.ts';
import { encodeMessage, encodeStop } from '../../src/dialects/messages/encode.ts';
import { call, settlement } from './rendering-fixtures.ts';

function result(overrides: Partial<CanonicalResult>): CanonicalResult {
  return { content: [], finish: { reason: 'stop', raw: 'end_turn' }, usage: settlement.usage, ...overrides };
}

describe('encodeMessage', () => {
  test('the message shell, every block kind in order, and usage with the cache split and the exact cost', () => {
    const message = encodeMessage(
      result({
        content: [
          { type: 'reasoning', text: 'Let me think.', signature: { family: 'anthropic', value: 'sig-1' } },
          { type: 'reasoning', text: '', redacted: true, signature: { family: 'anthropic', value: 'opaque' } },
          { type: 'text', text: 'Calling the tool.' },
          { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        ],
        finish: { reason: 'tool_calls', raw: 'tool_use' },
      }),
      call,
      settlement,
    );
    assert.deepEqual(message, {
      id: 'msg_abc',
      type: 'message',
      role: 'assistant',
      model: 'gateway/m',
      content: [
        { type: 'thinking', thinking: 'Let me think.', signature: 'sig-1' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'text', text: 'Calling the tool.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      stop_details: null,
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

  test('writes without a reported 1-hour part are 5-minute writes', () => {
    const usage = { inputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 9, outputTokens: 1, reasoningTokens: 0 };
    const message = encodeMessage(result({}), call, { ...settlement, usage });
    assert.deepEqual(message.usage.cache_creation, { ephemeral_5m_input_tokens: 9, ephemeral_1h_input_tokens: 0 });
  });

  test('reasoning without a signature is a thinking block with an empty one', () => {
    const message = encodeMessage(result({ content: [{ type: 'reasoning', text: 'hm' }] }), call, settlement);
    assert.deepEqual(message.content, [{ type: 'thinking', thinking: 'hm', signature: '' }]);
  });

  test('tool arguments that are not a JSON object are kept as the text produced, never replaced by {}', () => {
    const message = encodeMessage(result({ content: [{ type: 'tool_call', id: 't', name: 'f', arguments: '{"a":' }] }), call, settlement);
    assert.deepEqual(message.content, [{ type: 'tool_use', id: 't', name: 'f', input: '{"a":' }]);
  });
});

describe('encodeStop', () => {
  const cases: Array<[Finish, string | null, string | null]> = [
    [{ reason: 'stop', raw: 'end_turn' }, 'end_turn', null],
    [{ reason: 'stop', raw: 'stop' }, 'end_turn', null],
    [{ reason: 'stop', raw: 'stop_sequence', stopSequence: 'END' }, 'stop_sequence', 'END'],
    [{ reason: 'stop', raw: 'pause_turn' }, 'pause_turn', null],
    [{ reason: 'length', raw: 'max_tokens' }, 'max_tokens', null],
    [{ reason: 'length', raw: 'length' }, 'max_tokens', null],
    [{ reason: 'length', raw: 'model_context_window_exceeded' }, 'model_context_window_exceeded', null],
    [{ reason: 'tool_calls', raw: 'tool_use' }, 'tool_use', null],
    [{ reason: 'content_filter', raw: 'refusal' }, 'refusal', null],
    [{ reason: 'content_filter', raw: 'SAFETY' }, 'refusal', null],
    [{ reason: 'error', raw: 'cancelled' }, null, null],
  ];
  for (const [finish, stopReason, stopSequence] of cases) {
    test(`${finish.reason}/${finish.raw} → ${stopReason}`, () => {
      assert.deepEqual(encodeStop(finish), { stop_reason: stopReason, stop_sequence: stopSequence, stop_details: null });
    });
  }
  test("a refusal's details reach the client as Anthropic's stop_details", () => {
    const finish: Finish = { reason: 'content_filter', raw: 'refusal', refusal: { category: 'cyber', explanation: 'Not this.' } };
    assert.deepEqual(encodeStop(finish), {
      stop_reason: 'refusal',
      stop_sequence: null,
      stop_details: { type: 'refusal', category: 'cyber', explanation: 'Not this.' },
    });
  });
});
