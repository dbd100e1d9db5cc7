import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseResponsesError } from '../../../src/protocols/openai-responses/errors.ts';
import { parseResponsesResponse } from '../../../src/protocols/openai-responses/response.ts';
import { readJsonFixture } from '../../simulators/fixtures.ts';
import { finish, responseFixtureTests, result, usage } from '../helpers.ts';

const here = import.meta.dirname;
const GPT_41 = 'gpt-4.1-2025-04-14';
/** The reasoning item reference the fixtures' signatures carry. */
const REASONING_ITEM = '{"id":"rs_6820f383d7c08191846711c5df8233bc","encrypted_content":"gAAAAABoIPOH6jx1RV2p"}';

describe('openai responses: response fixtures → canonical result', () => {
  responseFixtureTests(here, parseResponsesResponse, {
    'text.json': result(['resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b', GPT_41], finish('stop', 'completed'), usage(36, 87), [
      { type: 'text', text: 'In a peaceful grove beneath a silver moon, a unicorn named Lumina discovered a hidden pool.' },
    ]),
    'tools.json': result(['resp_tools1', GPT_41], finish('tool_calls', 'completed'), usage(291, 23), [
      { type: 'tool_call', id: 'call_12345xyz', name: 'get_weather', arguments: '{"location":"Paris, France"}' },
      { type: 'tool_call', id: 'call_67890abc', name: 'get_weather', arguments: '{"location":"Bogotá, Colombia"}' },
    ]),
    'reasoning.json': result(['resp_reason1', 'o4-mini-2025-04-16'], finish('stop', 'completed'), usage(15, 410, { reasoningTokens: 384 }), [
      { type: 'reasoning', text: "**Counting the letters**\n\nThe word has three r's.\n\n**Answering**\n\nState the count.", signature: { family: 'openai', value: REASONING_ITEM } },
      { type: 'text', text: "There are three r's in strawberry." },
    ]),
    'length.json': result(['resp_len1', 'gpt-4.1-mini-2025-04-14'], finish('length', 'max_output_tokens'), usage(12, 16), [{ type: 'text', text: 'Once upon a time, in a land far' }]),
    // §9.7: uncached = input − cached − cache write.
    'cached-usage.json': result(['resp_cache1', 'gpt-5-2025-08-07'], finish('stop', 'completed'), usage(392, 700, { cacheReadTokens: 4096, cacheWriteTokens: 512, reasoningTokens: 640 }), [
      { type: 'reasoning', text: '', signature: { family: 'openai', value: '{"id":"rs_cache1"}' } },
      { type: 'text', text: 'Done.' },
    ]),
  });

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
