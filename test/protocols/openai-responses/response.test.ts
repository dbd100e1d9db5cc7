import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseResponsesError } from '../../../src/protocols/openai-responses/errors.ts';
import { parseResponsesResponse } from '../../../src/protocols/openai-responses/response.ts';
import { readJsonFixture } from '../../simulators/fixtures.ts';

const here = import.meta.dirname;

describe('openai responses: response fixtures → canonical result', () => {
  const rows = [
    {
      fixture: 'text.json',
      expected: {
        providerResponseId: 'resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b',
        providerModel: 'gpt-4.1-2025-04-14',
        content: [{ type: 'text', text: 'In a peaceful grove beneath a silver moon, a unicorn named Lumina discovered a hidden pool.' }],
        finish: { reason: 'stop', raw: 'completed' },
        usage: { inputTokens: 36, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 87, reasoningTokens: 0 },
      },
    },
    {
      fixture: 'tools.json',
      expected: {
        providerResponseId: 'resp_tools1',
        providerModel: 'gpt-4.1-2025-04-14',
        content: [
          { type: 'tool_call', id: 'call_12345xyz', name: 'get_weather', arguments: '{"location":"Paris, France"}' },
          { type: 'tool_call', id: 'call_67890abc', name: 'get_weather', arguments: '{"location":"Bogotá, Colombia"}' },
        ],
        finish: { reason: 'tool_calls', raw: 'completed' },
        usage: { inputTokens: 291, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 23, reasoningTokens: 0 },
      },
    },
    {
      fixture: 'reasoning.json',
      expected: {
        providerResponseId: 'resp_reason1',
        providerModel: 'o4-mini-2025-04-16',
        content: [
          {
            type: 'reasoning',
            text: "**Counting the letters**\n\nThe word has three r's.\n\n**Answering**\n\nState the count.",
            signature: { family: 'openai', value: '{"id":"rs_6820f383d7c08191846711c5df8233bc","encrypted_content":"gAAAAABoIPOH6jx1RV2p"}' },
          },
          { type: 'text', text: "There are three r's in strawberry." },
        ],
        finish: { reason: 'stop', raw: 'completed' },
        usage: { inputTokens: 15, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 410, reasoningTokens: 384 },
      },
    },
    {
      fixture: 'length.json',
      expected: {
        providerResponseId: 'resp_len1',
        providerModel: 'gpt-4.1-mini-2025-04-14',
        content: [{ type: 'text', text: 'Once upon a time, in a land far' }],
        finish: { reason: 'length', raw: 'max_output_tokens' },
        usage: { inputTokens: 12, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 16, reasoningTokens: 0 },
      },
    },
    {
      // §9.7: uncached = input − cached − cache write.
      fixture: 'cached-usage.json',
      expected: {
        providerResponseId: 'resp_cache1',
        providerModel: 'gpt-5-2025-08-07',
        content: [
          { type: 'reasoning', text: '', signature: { family: 'openai', value: '{"id":"rs_cache1"}' } },
          { type: 'text', text: 'Done.' },
        ],
        finish: { reason: 'stop', raw: 'completed' },
        usage: { inputTokens: 392, cacheReadTokens: 4096, cacheWriteTokens: 512, outputTokens: 700, reasoningTokens: 640 },
      },
    },
  ];
  for (const row of rows) {
    test(row.fixture, () => {
      assert.deepEqual(parseResponsesResponse(readJsonFixture(here, row.fixture)), row.expected);
    });
  }

  test('failed.json: a failed response is a retryable upstream error', () => {
    assert.throws(() => parseResponsesResponse(readJsonFixture(here, 'failed.json')), { status: 502, code: 'upstream_error', retryable: true });
  });

  test('a refusal part finishes as content_filter', () => {
    const body = { status: 'completed', output: [{ type: 'message', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] }] };
    const result = parseResponsesResponse(body);
    assert.deepEqual(result.content, [{ type: 'text', text: 'I cannot help with that.' }]);
    assert.deepEqual(result.finish, { reason: 'content_filter', raw: 'refusal' });
  });

  test('output_text annotations become citations', () => {
    const body = {
      status: 'completed',
      output: [{ type: 'web_search_call', id: 'ws_1', status: 'completed' }, { type: 'message', content: [{ type: 'output_text', text: 'News.', annotations: [{ type: 'url_citation', url: 'https://example.com/a', title: 'A', start_index: 0, end_index: 5 }] }] }],
    };
    assert.deepEqual(parseResponsesResponse(body).citations, [{ url: 'https://example.com/a', title: 'A', startIndex: 0, endIndex: 5 }]);
  });

  test('error bodies use the chat envelope', () => {
    const error = parseResponsesError(400, {}, JSON.stringify({ error: { message: "Unsupported parameter: 'stop'.", type: 'invalid_request_error', param: 'stop', code: 'unsupported_parameter' } }));
    assert.equal(error.status, 400);
    assert.equal(error.param, 'stop');
    const limited = parseResponsesError(429, { 'retry-after-ms': '1500' }, '{"error":{"message":"slow down","type":"requests"}}');
    assert.equal(limited.retryAfterSeconds, 2);
    assert.equal(limited.retryable, true);
  });
});
