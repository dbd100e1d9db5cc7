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
const TOOLS_REASONING_ID = 'rs_68af4030baa48193b0b43b4c2a176a1a';
const TOOLS_REASONING_TEXT = '**Checking the weather**\n\nThe user wants two cities.\n\n**Calling the tool**\n\nOne call per city.';

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
      {
        type: 'reasoning',
        text: "**Counting the letters**\n\nThe word has three r's.\n\n**Answering**\n\nState the count.",
        signature: { family: 'openai', value: REASONING_ITEM },
      },
      { type: 'text', text: "There are three r's in strawberry." },
    ]),
    // The reasoning item before the calls also rides, whole, on the first of them (what a chat client replays).
    'reasoning-tools.json': result(['resp_reasontools1', 'o4-mini-2025-04-16'], finish('tool_calls', 'completed'), usage(84, 220, { reasoningTokens: 192 }), [
      {
        type: 'reasoning',
        text: TOOLS_REASONING_TEXT,
        signature: { family: 'openai', value: `{"id":"${TOOLS_REASONING_ID}","encrypted_content":"gAAAAABor0AyZ0Qk8mK3"}` },
      },
      {
        type: 'tool_call',
        id: 'call_12345xyz',
        name: 'get_weather',
        arguments: '{"location":"Paris, France"}',
        signature: {
          family: 'openai',
          value: JSON.stringify([
            {
              type: 'reasoning',
              id: TOOLS_REASONING_ID,
              summary: [
                { type: 'summary_text', text: '**Checking the weather**\n\nThe user wants two cities.' },
                { type: 'summary_text', text: '**Calling the tool**\n\nOne call per city.' },
              ],
              encrypted_content: 'gAAAAABor0AyZ0Qk8mK3',
            },
          ]),
        },
      },
      { type: 'tool_call', id: 'call_67890abc', name: 'get_weather', arguments: '{"location":"Bogotá, Colombia"}' },
    ]),
    // Two search calls run queries (one of them two); opening a page runs none. Billing counts calls.
    'web-search.json': result(
      ['resp_67ccf18ef5fc8190b16dbee19bc54e5f087bb177ab789d5c', GPT_41],
      finish('stop', 'completed'),
      usage(328, 356),
      [
        {
          type: 'text',
          text: 'Seagrass meadows off the coast of Virginia have recovered to record size. A rescued loggerhead turtle was released back into the sea in Florida.',
        },
      ],
      {
        webSearch: { queries: ['positive news story today', 'sea turtle released Florida', 'loggerhead turtle rescue release this week'], billedQueries: 2 },
        citations: [
          {
            url: 'https://www.vims.edu/newsandevents/topstories/2025/sav_report.php',
            title: 'Seagrass recovery reaches a new high',
            startIndex: 0,
            endIndex: 73,
          },
          { url: 'https://www.example.org/news/loggerhead-release', title: 'Rescued loggerhead returns to the sea', startIndex: 74, endIndex: 144 },
        ],
      },
    ),
    'length.json': result(['resp_len1', 'gpt-4.1-mini-2025-04-14'], finish('length', 'max_output_tokens'), usage(12, 16), [
      { type: 'text', text: 'Once upon a time, in a land far' },
    ]),
    // docs/protocols.md, "Usage": uncached = input − cached − cache write.
    'cached-usage.json': result(
      ['resp_cache1', 'gpt-5-2025-08-07'],
      finish('stop', 'completed'),
      usage(392, 700, { cacheReadTokens: 4096, cacheWriteTokens: 512, reasoningTokens: 640 }),
      [
        { type: 'reasoning', text: '', signature: { family: 'openai', value: '{"id":"rs_cache1"}' } },
        { type: 'text', text: 'Done.' },
      ],
    ),
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

  test('a failed web search call is not billed; without any web search call there is no web-search info', () => {
    const failed = { type: 'web_search_call', id: 'ws_1', status: 'failed', action: { type: 'search', query: 'q' } };
    const message = { type: 'message', content: [{ type: 'output_text', text: 'No.', annotations: [] }] };
    assert.deepEqual(parseResponsesResponse({ status: 'completed', output: [failed, message] }).webSearch, { queries: [], billedQueries: 0 });
    assert.equal(parseResponsesResponse({ status: 'completed', output: [message] }).webSearch, undefined);
  });

  test('error bodies use the chat envelope', () => {
    const error = parseResponsesError(
      400,
      {},
      JSON.stringify({ error: { message: "Unsupported parameter: 'stop'.", type: 'invalid_request_error', param: 'stop', code: 'unsupported_parameter' } }),
    );
    assert.equal(error.status, 400);
    assert.equal(error.param, 'stop');
    const limited = parseResponsesError(429, { 'retry-after-ms': '1500' }, '{"error":{"message":"slow down","type":"requests"}}');
    assert.equal(limited.retryAfterSeconds, 2);
    assert.equal(limited.retryable, true);
  });
});
