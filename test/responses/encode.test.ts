/**
 * The Response object alone, built from canonical results: its items in content order with ids
 * stable per part, the status of each finish, the usage totals with the cost, and the request
 * settings echoed as the SDK's `Response` type requires them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CanonicalResult } from '../../src/canonical/index.ts';
import { encodeResponse } from '../../src/dialects/responses/encode.ts';
import type { TextCall } from '../../src/pipeline/kinds/text.ts';
import { chatRequest } from '../chat/helpers.ts';
import { call, settlement } from '../messages/rendering-fixtures.ts';

const result = (over: Partial<CanonicalResult> = {}): CanonicalResult => ({
  content: [{ type: 'text', text: 'Hello.' }],
  finish: { reason: 'stop', raw: 'completed' },
  usage: settlement.usage,
  ...over,
});

describe('encodeResponse', () => {
  test('a completed response: resp_ id from the request id, the model served, output an array, usage totals with the exact cost', () => {
    const response = encodeResponse(result(), call, settlement);
    assert.deepEqual(
      { id: response.id, object: response.object, created_at: response.created_at, status: response.status, model: response.model },
      { id: 'resp_abc', object: 'response', created_at: 1_700_000_000, status: 'completed', model: 'gateway/m' },
    );
    assert.deepEqual([response.error, response.incomplete_details], [null, null]);
    assert.deepEqual(response.output, [
      { type: 'message', id: 'msg_abc_0', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Hello.', annotations: [] }] },
    ]);
    // Input counts every input token (5 uncached + 2 read + 10 written); output includes reasoning.
    assert.deepEqual(response.usage, {
      input_tokens: 17,
      input_tokens_details: { cached_tokens: 2, cache_write_tokens: 10 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 3 },
      total_tokens: 24,
      cost: '0.000000123456',
    });
    assert.equal('output_text' in response, false, 'output_text is computed by the SDK, not sent');
  });

  test('reasoning, text with citations and function calls become items in content order, ids per part', () => {
    const response = encodeResponse(
      result({
        content: [
          { type: 'reasoning', text: 'Thinking.', signature: { family: 'anthropic', value: 'sig' } },
          { type: 'reasoning', text: '', redacted: true },
          { type: 'text', text: 'Per the source.' },
          { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'tool_call', id: 'call_2', name: 'get_time', arguments: 'not json' },
        ],
        finish: { reason: 'tool_calls', raw: null },
        citations: [{ url: 'https://example.com/a', title: 'A', startIndex: 0, endIndex: 7 }, { url: 'https://example.com/b' }],
      }),
      call,
      settlement,
    );
    assert.equal(response.status, 'completed');
    assert.deepEqual(response.output, [
      {
        type: 'reasoning',
        id: 'rs_abc_0',
        summary: [{ type: 'summary_text', text: 'Thinking.' }],
        status: 'completed',
        // The signature, packed, for the client to replay (src/dialects/responses/provider-data.ts).
        encrypted_content: Buffer.from(JSON.stringify({ family: 'anthropic', value: 'sig' })).toString('base64url'),
      },
      { type: 'reasoning', id: 'rs_abc_1', summary: [], status: 'completed' },
      {
        type: 'message',
        id: 'msg_abc_2',
        role: 'assistant',
        status: 'completed',
        content: [
          {
            type: 'output_text',
            text: 'Per the source.',
            annotations: [
              { type: 'url_citation', url: 'https://example.com/a', title: 'A', start_index: 0, end_index: 7 },
              { type: 'url_citation', url: 'https://example.com/b', title: '', start_index: 0, end_index: 15 },
            ],
          },
        ],
      },
      { type: 'function_call', id: 'fc_abc_3', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
      { type: 'function_call', id: 'fc_abc_4', call_id: 'call_2', name: 'get_time', arguments: 'not json', status: 'completed' },
    ]);
  });

  for (const [reason, status, details] of [
    ['length', 'incomplete', { reason: 'max_output_tokens' }],
    ['content_filter', 'incomplete', { reason: 'content_filter' }],
    ['stop', 'completed', null],
  ] as const) {
    test(`finish ${reason} → status ${status}${details ? ` (${details.reason})` : ''}`, () => {
      const response = encodeResponse(result({ finish: { reason, raw: null } }), call, settlement);
      assert.deepEqual([response.status, response.incomplete_details, response.error], [status, details, null]);
    });
  }

  test('the stored object of a stream that failed is failed, with an error; a client never gets one (stream.ts sends an error event)', () => {
    const response = encodeResponse(result({ finish: { reason: 'error', raw: null } }), call, settlement);
    assert.equal(response.status, 'failed');
    assert.equal(response.error?.code, 'server_error');
  });

  test('request settings are echoed in the API terms; defaults where the request left them out', () => {
    const bare = encodeResponse(result(), { ...call, request: { ...chatRequest(), system: [] } }, settlement);
    assert.deepEqual(
      {
        instructions: bare.instructions,
        parallel_tool_calls: bare.parallel_tool_calls,
        temperature: bare.temperature,
        top_p: bare.top_p,
        max_output_tokens: bare.max_output_tokens,
        tool_choice: bare.tool_choice,
        tools: bare.tools,
        reasoning: bare.reasoning,
        text: bare.text,
        user: bare.user,
      },
      {
        instructions: null,
        parallel_tool_calls: true,
        temperature: null,
        top_p: null,
        max_output_tokens: null,
        tool_choice: 'auto',
        tools: [],
        reasoning: { effort: null, summary: null },
        text: { format: { type: 'text' } },
        user: undefined,
      },
    );
    const asked: TextCall = {
      ...call,
      request: {
        ...chatRequest(),
        system: [{ text: 'Be brief.' }, { text: 'Be kind.' }],
        temperature: 0.5,
        topP: 0.9,
        maxOutputTokens: 100,
        tools: [{ name: 'get_weather', parameters: { type: 'object' }, strict: true }],
        toolChoice: { kind: 'tool', name: 'get_weather' },
        reasoning: { kind: 'effort', effort: 'none' },
        user: 'end-user',
      },
    };
    const echoed = encodeResponse(result(), asked, settlement);
    assert.deepEqual(
      [echoed.instructions, echoed.temperature, echoed.top_p, echoed.max_output_tokens, echoed.tool_choice, echoed.reasoning, echoed.user],
      ['Be brief.\n\nBe kind.', 0.5, 0.9, 100, { type: 'function', name: 'get_weather' }, { effort: 'none', summary: null }, 'end-user'],
    );
    assert.deepEqual(echoed.tools, [{ type: 'function', name: 'get_weather', description: null, parameters: { type: 'object' }, strict: true }]);
  });
});
