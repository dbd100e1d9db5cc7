import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseAnthropicError } from '../../../src/protocols/anthropic/errors.ts';
import { parseAnthropicResponse } from '../../../src/protocols/anthropic/response.ts';
import { readFixture, readJsonFixture } from '../../simulators/fixtures.ts';
import { finish, responseFixtureTests, result, usage } from '../helpers.ts';

const here = import.meta.dirname;
const SIGNATURE = 'WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve/op91XWHOEBLLqIOMfFG/UvLEczmEsUjavL';
const SONNET = 'claude-sonnet-4-5-20250929';
const HAIKU = 'claude-haiku-4-5-20251001';
const REDACTED_DATA = 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj';

describe('anthropic: response fixtures → canonical result', () => {
  responseFixtureTests(here, parseAnthropicResponse, {
    'text.json': result(['msg_01XFDUDYJgAACzvnptvVoYEL', SONNET], finish('stop', 'end_turn'), usage(12, 10), [
      { type: 'text', text: 'Hello! How can I help you today?' },
    ]),
    'tools.json': result(['msg_01Aq9w938a90dw8q', SONNET], finish('tool_calls', 'tool_use'), usage(384, 92), [
      { type: 'text', text: "I'll check the weather in San Francisco for you." },
      { type: 'tool_call', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', arguments: '{"location":"San Francisco, CA","unit":"celsius"}' },
    ]),
    'thinking.json': result(['msg_01ThinkXYZ', SONNET], finish('stop', 'end_turn'), usage(52, 310, { reasoningTokens: 280 }), [
      {
        type: 'reasoning',
        text: 'Let me analyze this step by step...',
        signature: { family: 'anthropic', value: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds8' },
      },
      { type: 'reasoning', text: '', redacted: true, signature: { family: 'anthropic', value: REDACTED_DATA } },
      { type: 'text', text: 'Based on my analysis, the answer is 12,231.' },
    ]),
    'length.json': result(['msg_01LengthStop', HAIKU], finish('length', 'max_tokens'), usage(14, 4), [{ type: 'text', text: 'Once upon a time' }]),
    'stop-sequence.json': result(['msg_01StopSeq', HAIKU], { reason: 'stop', raw: 'stop_sequence', stopSequence: '5' }, usage(20, 9), [
      { type: 'text', text: '1, 2, 3, 4, ' },
    ]),
    // input_tokens already excludes both cache counts; cache_creation splits the writes by lifetime.
    'cached-usage.json': result(
      ['msg_01CacheHit', SONNET],
      finish('stop', 'end_turn'),
      usage(21, 393, { cacheReadTokens: 1200, cacheWriteTokens: 188086, cacheWrite1hTokens: 100000 }),
      [{ type: 'text', text: 'The document discusses caching.' }],
    ),
  });

  test('thinking-tools.json: the thinking before the first tool call also travels as its signature', () => {
    const result = parseAnthropicResponse(readJsonFixture(here, 'thinking-tools.json'));
    const thinking = { type: 'thinking', thinking: 'The user wants the weather in Paris. I should call get_weather.', signature: SIGNATURE };
    assert.deepEqual(result.content, [
      { type: 'reasoning', text: thinking.thinking, signature: { family: 'anthropic', value: SIGNATURE } },
      { type: 'text', text: 'Let me check.' },
      {
        type: 'tool_call',
        id: 'toolu_01CswdEQBMshySk6Y9DFKrfq',
        name: 'get_weather',
        arguments: '{"location":"Paris"}',
        signature: { family: 'anthropic', value: JSON.stringify([thinking]) },
      },
      { type: 'tool_call', id: 'toolu_01SecondCall', name: 'get_time', arguments: '{"zone":"CET"}' },
    ]);
  });

  test('refusal → content_filter; web-search citations span their text block, document citations have no URL to report', () => {
    const result = parseAnthropicResponse({
      content: [
        { type: 'text', text: 'Hi. ' },
        {
          type: 'text',
          text: 'x',
          citations: [
            { type: 'web_search_result_location', url: 'https://a.example', title: 'A', cited_text: 'x' },
            { type: 'web_search_result_location', url: 'https://a.example', title: 'A', cited_text: 'again' },
            { type: 'char_location', cited_text: 'y' },
          ],
        },
      ],
      stop_reason: 'refusal',
      usage: { input_tokens: 1, output_tokens: 1 },
    });
    assert.deepEqual(result.finish, { reason: 'content_filter', raw: 'refusal' });
    assert.deepEqual(result.citations, [{ url: 'https://a.example', title: 'A', startIndex: 4, endIndex: 5 }]);
  });

  test('web-search.json: server tool blocks are not content; the query, the billed count and the citation come through', () => {
    const body = readJsonFixture(here, 'web-search.json') as { usage: unknown };
    const { providerUsage, ...parsed } = parseAnthropicResponse(body);
    assert.deepEqual(providerUsage, body.usage);
    assert.deepEqual(
      parsed,
      result(
        ['msg_a930390d3a', SONNET],
        finish('stop', 'end_turn'),
        usage(6039, 931),
        [
          { type: 'text', text: "I'll search for when Claude Shannon was born." },
          { type: 'text', text: 'Based on the search results, ' },
          { type: 'text', text: 'Claude Shannon was born on April 30, 1916, in Petoskey, Michigan' },
        ],
        {
          webSearch: { queries: ['claude shannon birth date'], billedQueries: 1 },
          citations: [{ url: 'https://en.wikipedia.org/wiki/Claude_Shannon', title: 'Claude Shannon - Wikipedia', startIndex: 74, endIndex: 138 }],
        },
      ),
    );
  });

  test("web search: a search answered with an error did not run; without the API's count, the searches that ran are billed", () => {
    const search = (id: string, query: string, content: unknown) => [
      { type: 'server_tool_use', id, name: 'web_search', input: { query } },
      { type: 'web_search_tool_result', tool_use_id: id, content },
    ];
    const body = (usage: object) => ({
      content: [
        ...search('srvtoolu_1', 'first', []),
        ...search('srvtoolu_2', 'second', { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' }),
        { type: 'text', text: 'Nothing found.' },
      ],
      stop_reason: 'end_turn',
      usage: { input_tokens: 1, output_tokens: 1, ...usage },
    });
    assert.deepEqual(parseAnthropicResponse(body({ server_tool_use: { web_search_requests: 1 } })).webSearch, { queries: ['first'], billedQueries: 1 });
    assert.deepEqual(parseAnthropicResponse(body({})).webSearch, { queries: ['first'], billedQueries: 1 });
    assert.equal(parseAnthropicResponse({ content: [{ type: 'text', text: 'x' }], stop_reason: 'end_turn', usage: {} }).webSearch, undefined);
  });

  test('a body without content is a retryable upstream fault', () => {
    assert.throws(() => parseAnthropicResponse({ type: 'message' }), { status: 502, code: 'upstream_error', retryable: true });
  });
});

describe('anthropic: upstream errors (docs/protocols.md, Upstream errors)', () => {
  test('529 overloaded → retryable 503', () => {
    const error = parseAnthropicError(529, {}, readFixture(here, 'overloaded.json'));
    assert.equal(error.status, 503);
    assert.equal(error.type, 'api_error');
    assert.equal(error.retryable, true);
    assert.match(error.message, /Overloaded/);
  });

  test('429 rate limit → retryable 429 with retry-after', () => {
    const error = parseAnthropicError(429, { 'retry-after': '7' }, readFixture(here, 'rate-limit.json'));
    assert.deepEqual([error.status, error.code, error.retryable, error.retryAfterSeconds], [429, 'upstream_rate_limited', true, 7]);
  });

  test('429 enforced_spend_limit_reached → the operator account exhausted: 503, another endpoint may serve, the client is not to retry', () => {
    const error = parseAnthropicError(429, {}, readFixture(here, 'spend-limit.json'));
    assert.deepEqual([error.status, error.type, error.code, error.retryable, error.clientMayRetry], [503, 'api_error', 'upstream_unavailable', true, false]);
  });

  test("401/403 from upstream → non-retryable 502 api_error (the gateway's key, not the client's)", () => {
    for (const status of [401, 403]) {
      const error = parseAnthropicError(status, {}, '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}');
      assert.deepEqual([error.status, error.type, error.retryable], [502, 'api_error', false]);
      assert.doesNotMatch(error.message, /x-api-key/);
    }
  });

  test('400 invalid_request_error → 400 with the provider message; 500 → retryable 502', () => {
    const bad = parseAnthropicError(400, {}, '{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}');
    assert.deepEqual([bad.status, bad.retryable], [400, false]);
    assert.match(bad.message, /max_tokens: Field required/);
    const server = parseAnthropicError(500, {}, '<html>oops</html>');
    assert.deepEqual([server.status, server.retryable], [502, true]);
  });
});
